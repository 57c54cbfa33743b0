"""Tuning without a GPU: a Kernel Tuner cache file is the measurement source.

The candidates are the cache's configurations that the SPEC describes (its
`fixed_parameters`), each predicted by the model with the kernel variant that
`kernel_for` gives for its non-block parameters; configurations the model
rejects (the device cannot run them) are never measured, as on a GPU. A
configuration that failed when it was recorded (Kernel Tuner's failure
markers) costs a measurement and returns no time, as it would on the GPU.
"""

from __future__ import annotations

import hashlib
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..devices import Device, get_device
from ..errors import ConfigurationError, MeasurementError, NothingRunsError
from ..launch import DEFAULT_MODEL, LaunchConfig
from ..measure.kernel_tuner import TunableSpec, TunerData, load_tunable_spec, split_parameters
from ..parallel import SizedIterable, can_fork, resolve_jobs, run_tasks
from ..rank import rank
from ..resources import RECORDED_ARCH
from .record import kernel_hash, software_versions
from .tuner import Candidate, params_key


@dataclass(frozen=True)
class SpecCandidates:
    """The configurations a SPEC describes as candidates, and those the model rejected with its reason."""

    candidates: list[Candidate]
    rejected: list[tuple[dict, str]]

    @property
    def not_compiled(self) -> int:
        """How many candidates kept the time predicted without their own code's registers, a bound
        (`spec_candidates`' `compile_until_certain`; `Candidate.exact`)."""
        return sum(not c.exact for c in self.candidates)


def spec_candidates(
    configurations: list[dict],
    spec: TunableSpec,
    device: Device | str,
    *,
    model: str | None = None,
    backend: str = "auto",
    progress=None,
    source: str = "the search space",
    jobs: int | None = None,
    executor: str = "processes",
    meanwhile=None,
    meanwhile_after_s: float = 5.0,
    compile_until_certain: int | None = None,
    recorded: dict | None = None,
) -> SpecCandidates:
    """Every configuration (tunable parameters by name) that `spec` describes, with the model's time per launch.

    Each variant (the parameters that are neither the block nor fixed) is ranked with the kernel that
    `spec.kernel_for` gives for it, by `model` (default `launch.DEFAULT_MODEL`), in `jobs` processes (every core
    by default) or on a Ray cluster (``executor="ray"``; `parallel.run_tasks`): a few variants' blocks are split
    into several tasks, so that every worker has work. `progress` wraps the iteration over the finished tasks,
    e.g. a progress bar; `source` names where the configurations come from, in errors.

    `meanwhile`, where given, is called once with the candidates predicted so far when a task finishes
    `meanwhile_after_s` seconds or more after the start and others are still running: a tuner measures the best
    of them while the rest is ranked (its first measurement need not wait for a space that takes minutes).

    Where a plugin compiles each launch's code (`perf_launch_resources`: a CUDA description's ``block_size_names``,
    seconds per launch) every launch is compiled, unless `compile_until_certain` is a number N: then the space is
    ranked with each launch's occupancy from its threads, and the launches are compiled in that order, a few at a
    time (`COMPILERS_PER_CORE` per worker), until the N fastest compiled ones are no slower than the next uncompiled launch
    could be (its time without its registers, times the smallest ratio of compiled to uncompiled time seen so
    far: registers lower the occupancy, which mostly slows a launch). The others keep the time without their
    registers, a bound (`Candidate.exact` False; `CompileBeforeMeasuring` compiles one before it is measured).

    `recorded`, where given, holds the resources measured data recorded for configurations (`ResourceUsage` by
    `params_key`; `TunedRun.resources`): a launch whose code no plugin compiles is ranked with them.
    """
    if compile_until_certain is not None and compile_until_certain < 1:
        raise ConfigurationError(f"compile_until_certain={compile_until_certain}: give a positive number, or None")
    dev = get_device(device)
    model = model or DEFAULT_MODEL
    groups: dict[tuple, list[tuple[dict, object]]] = {}
    as_run: dict[tuple, object] = {}  # (variant items, block) -> the resources `recorded` has for it
    for params in configurations:
        split = split_parameters(source, params, spec)
        if split is not None:
            others, launch = split
            groups.setdefault(tuple(sorted(others.items())), []).append((params, launch))
            if recorded and (usage := recorded.get(params_key(params))) is not None:
                as_run[tuple(sorted(others.items())), launch.block] = usage
    if not groups:
        raise MeasurementError(
            f"{source}: no configuration matches the SPEC's fixed parameters {spec.fixed_parameters}"
        )
    variants = sorted(groups.items())
    workers = 1 if executor == "processes" and not can_fork() else resolve_jobs(jobs)
    siblings = _siblings(variants)
    splits = -(-8 * workers // len(siblings)) if workers > 1 else 1  # about 8 tasks a worker: the last ones are short
    tasks = []
    for family in siblings:
        blocks = {others: sorted({launch.block for _, launch in members}) for others, members in family}
        for k in range(splits):  # the k-th part of each sibling's blocks
            parts = []
            for others, b in blocks.items():
                size = -(-len(b) // splits)
                if part := b[k * size : (k + 1) * size]:
                    parts.append((dict(others), part))
            if parts:
                tasks.append(
                    (spec.path, parts, dev, model, backend, compile_until_certain is None, _recorded_of(parts, as_run))
                )
    _SPECS[spec.path] = spec
    predicted, reasons = {}, {}
    # the launches compiled in order, with their throughput from their own code's registers
    exact: dict | None = None if compile_until_certain is None else {}
    start, finished = time.perf_counter(), 0

    def offer(current: dict, more_to_come: bool = True) -> None:
        """`meanwhile` once, with the candidates `current` predicts, where the time has come and work is left."""
        nonlocal meanwhile
        if meanwhile and more_to_come and time.perf_counter() - start >= meanwhile_after_s:
            meanwhile(_candidates(variants, current, reasons, spec, exact).candidates)
            meanwhile = None

    def collect(results):
        nonlocal finished
        for index, result in results:
            predicted.update(result[0])
            reasons.update(result[1])
            for message, category in result[2]:  # here, where one is given once, however many tasks gave it
                warnings.warn(message, category)
            finished += 1
            offer(predicted, finished < len(tasks))
            yield index, result

    run_tasks(
        _variant_predictions,
        tasks,
        jobs=workers,
        executor=executor,
        progress=(lambda results: progress(SizedIterable(collect(results), len(results)))) if progress else collect,
    )
    if compile_until_certain is None:
        return _candidates(variants, predicted, reasons, spec)

    task = (spec.path, dev, model, backend, as_run)
    if not _compile_in_order(task, predicted, reasons, compile_until_certain, workers, executor, offer, exact):
        return _candidates(variants, predicted, reasons, spec)  # no plugin compiles this SPEC's launches
    final = {key: exact.get(key, rate) for key, rate in predicted.items() if key not in reasons}
    return _candidates(variants, final, reasons, spec, exact)


def _candidates(
    variants, predicted: dict, reasons: dict, spec: TunableSpec, compiled: dict | None = None
) -> SpecCandidates:
    """The configurations of `variants` as candidates with the model's time, where `predicted` has it; those whose
    key is not in `compiled` (where given: the launches compiled so far) with a time that is a bound."""
    candidates, rejected = [], []
    for others, members in variants:
        for params, launch in members:
            key = (others, launch)
            if key in predicted:
                exact = compiled is None or key in compiled
                candidates.append(Candidate(params, spec.lattice_updates / predicted[key], launch, exact))
            else:
                rejected.append((params, reasons.get(key, "not a candidate of the model")))
    return SpecCandidates(candidates, rejected)


class CompileBeforeMeasuring:
    """`tune`'s ``admit`` for the candidates `spec_candidates` left uncompiled: ranks one launch with its own
    code's registers, as compiling every launch would have: the candidate with that time, or why its code cannot
    run (then it is never measured). Options as for `spec_candidates`."""

    def __init__(
        self,
        spec: TunableSpec,
        device: Device | str,
        *,
        model: str | None = None,
        backend: str = "auto",
        source: str = "the search space",
    ):
        self.spec, self.device, self.model = spec, get_device(device), model or DEFAULT_MODEL
        self.backend, self.source = backend, source

    def __call__(self, candidate: Candidate) -> Candidate | str:
        split = split_parameters(self.source, candidate.params, self.spec)
        if split is None:
            raise MeasurementError(f"{candidate.label} does not have the SPEC's fixed parameters")
        others, launch = split
        _SPECS[self.spec.path] = self.spec
        predicted, reasons, caught, _ = _variant_predictions(
            self.spec.path, [(others, [launch.block])], self.device, self.model, self.backend
        )
        for message, category in caught:
            warnings.warn(message, category)
        key = (tuple(sorted(others.items())), launch)
        if key in predicted:
            return Candidate(candidate.params, self.spec.lattice_updates / predicted[key], launch)
        return reasons.get(key, "not a candidate of the model")


#: launches `spec_candidates` compiles at once per worker it may use, in its ordered compile
COMPILERS_PER_CORE = 2


def _compile_in_order(
    task: tuple, bounds: dict, reasons: dict, head: int, workers: int, executor: str, meanwhile, exact: dict
) -> bool:
    """Fills `exact` with the throughput of the launches of `bounds` (key -> throughput with each launch's occupancy
    from its threads) that `spec_candidates` compiles in order (`compile_until_certain` = `head`), each ranked with
    its own code's registers (a launch no plugin compiles: its time again); those the compiled code cannot run join
    `reasons`. False where no plugin compiled a launch it was asked for.
    `task`: (SPEC path, device, model, backend, the resources the measured data recorded by (variant items,
    block))."""
    spec_path, dev, model, backend, as_run = task
    order = sorted(bounds, key=lambda key: (-bounds[key], key[1]))  # the fastest without registers first
    lowest_ratio = 1.0  # of a compiled launch's time to its time without registers
    begin, any_compiled = 0, False
    while begin < len(order):
        # the first launch alone in this process, which then forks its workers warm (imports, caches); then two
        # compilers a core, as the compiler plugins run them (`map_on_every_core` in each worker): a compiler waits
        # for its files part of the time
        batch = order[begin : begin + (COMPILERS_PER_CORE * max(workers, 1) if begin else 1)]
        tasks = [
            (spec_path, parts, dev, model, backend, True, _recorded_of(parts, as_run))
            for parts in ([(dict(others), [launch.block])] for others, launch in batch)
        ]
        results = run_tasks(_variant_predictions, tasks, jobs=len(batch) if workers > 1 else 1, executor=executor)
        begin += len(batch)
        # a launch that ran without its registers and does not with them was compiled, though no ranking holds it
        any_compiled = any_compiled or any(
            plugin_compiled or key not in rates for key, (rates, *_, plugin_compiled) in zip(batch, results)
        )
        for key, (rates, why, _, _) in zip(batch, results):
            if key in rates:
                exact[key] = rates[key]
                lowest_ratio = min(lowest_ratio, bounds[key] / rates[key])
            else:
                reasons[key] = why.get(key, "not a candidate of the model")
        meanwhile({key: exact.get(key, rate) for key, rate in bounds.items() if key not in reasons})
        rest = order[begin:]
        fastest = sorted(exact.values(), reverse=True)
        if rest and len(fastest) >= head and fastest[head - 1] * lowest_ratio >= bounds[rest[0]]:
            break
    # a SPEC whose launches no plugin compiles (none of those that can be fastest) was ranked right at once
    return any_compiled


#: SPECs by path: in forked workers the parent's own, in Ray workers each loaded once
_SPECS: dict[str, TunableSpec] = {}


def _siblings(variants: list) -> list[list]:
    """`variants` in families that differ in one parameter only, the one with the fewest values (a switch such
    as ``read_only``): ranked one after the other in one process, a family shares what its kernels have alike
    (the same loads under another ``read_only`` compile once, and touch the same memory)."""
    values: dict[str, set] = {}
    for others, _ in variants:
        for name, value in others:
            values.setdefault(name, set()).add(value)
    switches = sorted((len(v), name) for name, v in values.items() if len(v) > 1)
    if not switches:
        return [[variant] for variant in variants]
    switch = switches[0][1]
    families: dict[tuple, list] = {}
    for others, members in variants:
        families.setdefault(tuple(item for item in others if item[0] != switch), []).append((others, members))
    return list(families.values())


def _recorded_of(parts: list, as_run: dict) -> dict:
    """The recorded resources of the launches of `parts` ((variant, blocks) pairs), by (variant items, block)."""
    keys = ((tuple(sorted(variant.items())), block) for variant, blocks in parts for block in blocks)
    return {key: as_run[key] for key in keys if key in as_run}


def _variant_predictions(
    spec_path: str,
    parts: list,
    device: Device,
    model: str,
    backend: str,
    compile_launches: bool = True,
    recorded: dict | None = None,
):
    """The model's throughput (updates per second) of each variant's launches with its blocks (`parts`: (variant,
    blocks) pairs, ranked in turn), and the reasons of those it rejected, each keyed by (variant items, launch); the
    warnings of the rankings (a kernel's `PerfWarning`), which `spec_candidates` gives: the tasks of a variant,
    each in a worker of its own, would each give them; and whether a plugin compiled a launch's code
    (`compile_launches`: let them, `rank`). `recorded`: the resources measured data recorded, by (variant items,
    block) (`_recorded_of`)."""
    if spec_path not in _SPECS:
        _SPECS[spec_path] = load_tunable_spec(spec_path)
    predicted, reasons, compiled = {}, {}, False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # `spec_candidates`' filters decide
        for variant, blocks in parts:
            others = tuple(sorted(variant.items()))
            as_run = {LaunchConfig(b): recorded[others, b] for b in blocks if (others, b) in (recorded or {})}
            try:
                ranking = rank(
                    _SPECS[spec_path].kernel(variant),
                    device,
                    blocks=blocks,
                    folds=[(1, 1, 1)],
                    model=model,
                    backend=backend,
                    compile_launches=compile_launches,
                    jobs=1,
                    launch_resources=as_run or None,
                )
            except NothingRunsError as err:  # a variant that runs in none of these blocks: all of them rejected
                reasons.update({(others, launch): reason for launch, reason in err.rejected})
                continue
            predicted.update({(others, c.launch): c.prediction.lups_per_second for c in ranking.candidates})
            reasons.update({(others, launch): reason for launch, reason in ranking.rejected})
            compiled = compiled or any(u.arch != RECORDED_ARCH for u in ranking.launch_resources.values())
    return predicted, reasons, list(dict.fromkeys((str(w.message), w.category) for w in caught)), compiled


def replay_candidates(data: TunerData, spec: TunableSpec, device: Device | str, **options) -> SpecCandidates:
    """The configurations of a cache, those that ran and those that failed, those that ran with the resources the
    cache recorded for them (options as for `spec_candidates`)."""
    recorded = {params_key(run.params): run.resources for run in data.runs if run.resources is not None}
    return spec_candidates(
        [run.params for run in data.runs] + list(data.failed),
        spec,
        device,
        source=data.path,
        recorded=recorded or None,
        **options,
    )


def spec_kernel_key(spec: TunableSpec, candidates: list[Candidate]) -> str:
    """The record's kernel hash of a SPEC's space: the SPEC file's text and the candidates' parameters."""
    return kernel_hash(Path(spec.path).read_bytes(), [c.params for c in candidates])


def _file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ReplaySource:
    """Times from a Kernel Tuner cache, looked up by the candidate's parameters, in the order of the model's
    predictions for `device`."""

    def __init__(self, data: TunerData, device: Device | str):
        self.data = data
        self.device = get_device(device)
        self.times = {params_key(run.params): run.time_ms for run in data.runs}
        self.times.update({params_key(params): None for params in data.failed})

    def fingerprint(self) -> dict[str, str]:
        """The cache's GPU name and the cache file's hash: its measurements are those of one GPU and set-up; and
        the device the search's predictions are for (its name and a hash of its numbers), whose order decides what
        is measured."""
        return {
            "name": self.data.device_name or "unnamed",
            "replay": f"{Path(self.data.path).name} sha256:{_file_hash(self.data.path)[:16]}",
            "predicted_for": f"{self.device.name} sha256:{kernel_hash(self.device)[:16]}",
            **software_versions(),
        }

    def time_ms(self, candidate: Candidate) -> float | None:
        key = params_key(candidate.params)
        if key not in self.times:
            raise MeasurementError(f"{self.data.path} has no measurement of {candidate.label}")
        return self.times[key]


def expected_of_random_sampling(times_ms: list[float | None], budget: int) -> float:
    """What random sampling reaches on average on a replayed cache: the optimum over the best time of `budget`
    distinct configurations drawn at random, over every such draw (a failed configuration, None, counts 0).
    The floor a search must not fall below (issue 56)."""
    timed = [t for t in times_ms if t is not None]
    if not timed or budget < 1:
        return 0.0
    fractions = sorted((min(timed) / t if t is not None else 0.0 for t in times_ms), reverse=True)
    n, budget = len(fractions), min(budget, len(fractions))
    log_draws = math.lgamma(n + 1) - math.lgamma(budget + 1) - math.lgamma(n - budget + 1)
    expected = 0.0
    for k, fraction in enumerate(fractions[: n - budget + 1]):  # the k-th best is the best drawn
        rest = n - 1 - k
        log_ways = math.lgamma(rest + 1) - math.lgamma(budget) - math.lgamma(rest - budget + 2)
        expected += fraction * math.exp(log_ways - log_draws)
    return expected
