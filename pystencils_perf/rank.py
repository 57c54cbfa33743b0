"""Evaluate launch candidates and rank them; the default `perf_select` plugin.

`rank` is the one entry point: harvest, candidates, checks, estimate, predict.
A `Ranking` prints as a table and writes JSON (a contract other tools read:
keep its keys) and CSV.
"""

from __future__ import annotations

import csv
import gc
import io
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .devices import Device, get_device
from .devices.report import confidence_notes
from .errors import ConfigurationError, HarvestError, PerfError
from .estimate.plugin import get_backend
from .launch import DEFAULT_DEVICE, DEFAULT_MODEL, CandidateSpace, LaunchConfig, RankOptions, check_threads
from .metrics import VOLUME_FIELDS, Metrics
from .outputs import write_text
from .parallel import can_fork, resolve_jobs, run_tasks
from .plugins import BLOCK_ENV, blocked_adapters, get_plugin_manager
from .predict import Prediction
from .resources import launch_resources_note, resources_note, with_launch_resources, with_resources
from .selection import TIE_BREAK, tie_break

if TYPE_CHECKING:
    from .kernel import KernelModel


@dataclass(frozen=True)
class RankedCandidate:
    launch: LaunchConfig
    prediction: Prediction
    metrics: Metrics

    def as_json(self) -> dict:
        m = self.metrics
        return {
            "block": list(self.launch.block),
            "fold": list(self.launch.fold),
            "glups": self.prediction.glups,
            "limiter": self.prediction.limiter,
            "bytes_per_lup": {
                "l2_load": m.l2_load_bytes_per_lup,
                "l2_store": m.l2_store_bytes_per_lup,
                "dram_load": m.dram_load_bytes_per_lup,
                "dram_store": m.dram_store_bytes_per_lup,
            },
            "l1_cycles_per_lup": m.l1_cycles_per_lup,
            "seconds_per_lup": dict(self.prediction.seconds_per_lup),
            "metrics": m.as_dict(),
        }


@dataclass
class Ranking:
    """The result of `rank`: candidates best first, and the ones rejected with their reason.

    Prints as a table (`table`), writes JSON (`as_json`, `write_json`: a contract other
    tools read) and CSV (`to_csv`).

    Attributes
    ----------
    device : Device
        The device the candidates were ranked for.
    kernel : str
        The kernel's name.
    candidates : list of RankedCandidate
        Every candidate that can run, highest predicted throughput first; each has a
        ``launch`` (`LaunchConfig`), a ``prediction`` (`Prediction`) and ``metrics``
        (`Metrics`).
    rejected : list of (LaunchConfig, str)
        The candidates a check or a filter rejected, each with its one-line reason.
    resources : dict
        Registers, spills and shared memory per fold (``(fx, fy, fz)`` -> `ResourceUsage`),
        where a `perf_resources` plugin compiled the kernel.
    resources_note : str
        Where the occupancy came from: measured registers per fold or per launch, or assumed.
    launch_resources : dict
        Registers, spills and shared memory per launch (`LaunchConfig` -> `ResourceUsage`), where a
        `perf_launch_resources` plugin compiled each launch's code (its block size compiled in).
    """

    device: Device
    kernel: str
    candidates: list[RankedCandidate]
    rejected: list[tuple[LaunchConfig, str]] = field(default_factory=list)
    #: registers, spills and shared memory per fold, where a `perf_resources` plugin compiled the kernel
    resources: dict = field(default_factory=dict)
    #: where the occupancy came from: measured registers per fold, or assumed
    resources_note: str = ""
    #: registers, spills and shared memory per launch, where a `perf_launch_resources` plugin compiled each
    launch_resources: dict = field(default_factory=dict)

    @property
    def best(self) -> RankedCandidate:
        """The candidate predicted fastest (`select` breaks ties among `tied` by `TIE_BREAK`)."""
        return self.candidates[0]

    @property
    def tied(self) -> list[RankedCandidate]:
        """The candidates within the model's measured error of the best: the model cannot order them."""
        best = self.best.prediction
        floor = best.lups_per_second * (1.0 - best.relative_error)
        return [c for c in self.candidates if c.prediction.lups_per_second >= floor]

    def tie_line(self) -> str:
        """What the table says about a tie at the top, or "" if the best stands alone."""
        tied = self.tied
        if len(tied) < 2:
            return ""
        chosen = select(self)  # what the `perf_select` plugins choose, as `as_json` and the table's > say
        why = (
            f"by {TIE_BREAK}"
            if chosen is tie_break(tied, self.device.warp_size)
            else "as an installed selection plugin (perf_select) chooses"
        )
        error = self.best.prediction.relative_error
        where = (
            f"lie within {error:.1%} of the best, the model's measured error"
            if error
            else "are predicted equally fast (the model states no error)"
        )
        return f"  {len(tied)} candidates (marked = or >) {where}: a tie; select() takes {chosen.launch.label} {why}"

    def as_json(self) -> dict:
        chosen = select(self)
        return {
            "device": self.device.name,
            "device_notes": confidence_notes(self.device),
            "resources": self.resources_note,
            "selected": {"block": list(chosen.launch.block), "fold": list(chosen.launch.fold)},
            "tied": len(self.tied),
            "kernel": self.kernel,
            "candidates": [c.as_json() for c in self.candidates],
            "rejected": [{"block": list(l.block), "fold": list(l.fold), "reason": r} for l, r in self.rejected],
        }

    def write_json(self, path) -> None:
        """`path` replaced by the JSON whole (`outputs.write_text`)."""
        write_text(path, json.dumps(self.as_json(), indent=1))

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(
            [
                "rank",
                "bx",
                "by",
                "bz",
                "fx",
                "fy",
                "fz",
                "glups",
                "limiter",
                "dram_load_B_per_lup",
                "dram_store_B_per_lup",
                "l2_load_B_per_lup",
                "l2_store_B_per_lup",
                "l1_cycles_per_lup",
            ]
        )
        for i, c in enumerate(self.candidates, 1):
            m = c.metrics
            w.writerow(
                [
                    i,
                    *c.launch.block,
                    *c.launch.fold,
                    f"{c.prediction.glups:.4f}",
                    c.prediction.limiter,
                    *(f"{m.value(k):.3f}" for k in (*VOLUME_FIELDS, "l1_cycles_per_lup")),
                ]
            )
        return out.getvalue()

    def terms_line(self) -> str:
        """The candidate `select` takes (its row marked >), its throughput and what limits it: the model's terms
        (`Prediction.seconds_per_lup`)."""
        pick = select(self)
        terms = ", ".join(f"{name} {1e12 * seconds:.1f}" for name, seconds in pick.prediction.seconds_per_lup.items())
        return (
            f"  > {pick.launch.label}, the pick: {pick.prediction.glups:.2f} GLup/s predicted; "
            f"picoseconds per update by term: {terms}"
        )

    def table(self, head: int | None = None) -> str:
        """One readable row per candidate, best first, with its limiter and volumes; with `head`, the first
        `head` rows and the pick's row (marked >) wherever it ranks."""
        rows = self.candidates if head is None else self.candidates[:head]
        pick = select(self) if self.candidates else None
        tied_candidates, tie_line = self.tied, self.tie_line()
        lines = [
            f"{self.kernel} on {self.device.name}: {len(self.candidates)} candidates"
            + (f", {len(self.rejected)} rejected" if self.rejected else ""),
            *(f"  device note: {note}" for note in confidence_notes(self.device)),
            *([f"  {self.resources_note}"] if self.resources_note else []),
            *([tie_line] if tie_line else []),
            f"{'#':>4} {'block':>12} {'fold':>7} {'GLup/s':>7} {'limiter':>7} "
            f"{'DRAM ld':>8} {'DRAM st':>8} {'L2 ld':>7} {'L2 st':>7} {'L1 cyc':>7} {'blk/SM':>6}",
            f"{'':>4} {'':>12} {'':>7} {'':>7} {'':>7} {'B/Lup':>8} {'B/Lup':>8} {'B/Lup':>7} {'B/Lup':>7} {'/Lup':>7}",
        ]
        tied = {id(c) for c in tied_candidates} if len(tied_candidates) > 1 else set()

        def row(i: int, c: RankedCandidate) -> str:
            m = c.metrics
            mark = ">" if c == pick else "=" if id(c) in tied else " "
            return (
                f"{mark}{i:>3} {'x'.join(map(str, c.launch.block)):>12} {'x'.join(map(str, c.launch.fold)):>7} "
                f"{c.prediction.glups:>7.2f} {c.prediction.limiter:>7} "
                f"{m.dram_load_bytes_per_lup:>8.2f} {m.dram_store_bytes_per_lup:>8.2f} "
                f"{m.l2_load_bytes_per_lup:>7.2f} {m.l2_store_bytes_per_lup:>7.2f} "
                f"{m.l1_cycles_per_lup:>7.3f} {m.blocks_per_sm:>6}"
            )

        lines += [row(i, c) for i, c in enumerate(rows, 1)]
        if head is not None and head < len(self.candidates):
            lines.append(f"  ... {len(self.candidates) - head} more")
            if pick in self.candidates[head:]:
                lines.append(row(self.candidates.index(pick) + 1, pick))
        if self.candidates:
            lines.append(self.terms_line())
        for launch, reason in self.rejected:
            lines.append(f"  rejected {launch.label}: {reason}")
        return "\n".join(lines)


def _extras(pm, model, launch, device, options, metrics: Metrics) -> Metrics:
    """`metrics` with the plugins' `perf_estimate_extras` merged in; a name given twice is an error."""
    merged: dict = {}
    for part in pm.hook.perf_estimate_extras(
        model=model, launch=launch, device=device, options=options, metrics=metrics
    ):
        clash = merged.keys() & (part or {}).keys()
        if clash:
            raise PerfError(f"candidate {launch.label}: two estimator plugins report {', '.join(sorted(clash))}")
        merged.update(part or {})
    return replace(metrics, extras={**metrics.extras, **merged}) if merged else metrics


def check_names(kind: str, asked, offered: list[dict]) -> None:
    """Refuse a model or filter name no installed plugin offers (`offered`: the answers of its listing hook)."""
    known = {name for names in offered for name in (names or {})}
    for name in asked:
        if name not in known:
            raise ConfigurationError(f"unknown {kind} {name!r}; installed: {', '.join(sorted(known)) or 'none'}")


def harvest(kernel, *, domain_shape=None, align="base", field_strides=None, base_offsets_bytes=None) -> KernelModel:
    """Describe `kernel` (a pystencils GPU kernel, assignments, or whatever an adapter plugin takes).

    A `KernelModel` is returned as it is. See `HarvestOptions` for the keyword arguments.
    """
    from .kernel import HarvestOptions, KernelModel  # sympy: here, so that importing `rank` (a plugin) does not

    if isinstance(kernel, KernelModel):
        return kernel
    if isinstance(kernel, (list, tuple)) and not kernel:
        raise HarvestError(f"the kernel is empty: {kernel!r} holds no assignments")
    options = HarvestOptions(
        domain_shape=domain_shape,
        align=align,
        field_strides=dict(field_strides or {}),
        base_offsets_bytes=dict(base_offsets_bytes or {}),
    )
    model = get_plugin_manager().hook.perf_harvest(kernel=kernel, options=options)
    if model is None:
        blocked = blocked_adapters()
        what = f"a {type(kernel).__module__}.{type(kernel).__qualname__}"
        if blocked:
            plugins = f"plugins {', '.join(blocked)} are" if len(blocked) > 1 else f"plugin {blocked[0]} is"
            raise HarvestError(
                f"no adapter plugin recognises {what}: the adapter {plugins} blocked (--block-plugin or {BLOCK_ENV})"
            )
        raise HarvestError(
            f"no adapter plugin recognises {what}; "
            "pass a pystencils GPU kernel, pystencils assignments, or install an adapter plugin"
        )
    _check_not_empty(model)
    return model


def _check_not_empty(model: KernelModel) -> None:
    """Refuse a kernel that updates no point (fields no larger than their ghost layers), before any candidate
    is rejected for folding or blocking more points than there are."""
    if model.lattice_updates > 0 and all(n > 0 for n in model.work_items):
        return
    fields = ", ".join(f"{f.name!r} of shape {f.shape}" for f in model.fields)
    raise HarvestError(
        f"kernel {model.name!r} updates no point: its interior is empty ({fields} "
        f"leave nothing inside the ghost layers its accesses need)"
    )


def candidate_space(model, device, options: RankOptions, pm=None) -> CandidateSpace:
    """The one enumeration of candidates that `rank`, `create_kernel` and `measure` share."""
    check_threads(options.threads, device)
    pm = pm or get_plugin_manager()
    seen, accepted, rejected = set(), [], []
    for contributed in pm.hook.perf_candidates(model=model, device=device, options=options):
        for launch in contributed:
            if launch in seen:
                continue
            seen.add(launch)
            reasons = [r for r in pm.hook.perf_check_candidate(model=model, launch=launch, device=device) if r]
            if reasons:
                rejected.append((launch, "; ".join(reasons)))
            else:
                accepted.append(launch)
    if not seen:
        raise ConfigurationError(f"no plugin proposes a launch candidate for kernel {model.name!r}")
    return CandidateSpace(tuple(accepted), tuple(rejected))


def with_measured_resources(pm, kernel, recipe, model, device, options: RankOptions, compile_resources: bool = True):
    """The model with each fold's registers from the `perf_resources` plugins and each launch's from the
    `perf_launch_resources` plugins, its candidate space, and both sets of resources.

    `rank`, `create_kernel` (through `rank`) and `measure` share this, so all of
    them reject and rank candidates with the same occupancy.
    """
    space = candidate_space(model, device, options, pm)
    resources, launch_resources = {}, {}
    if compile_resources and not model.registers_by_fold:
        resources = (
            pm.hook.perf_resources(kernel=kernel, recipe=recipe, model=model, folds=space.folds, device=device) or {}
        )
        if resources:
            model = with_resources(model, resources)
            space = candidate_space(model, device, options, pm)  # registers may now reject candidates
    if compile_resources and not model.resources_by_launch:
        launch_resources = (
            pm.hook.perf_launch_resources(kernel=kernel, model=model, launches=list(space.accepted), device=device)
            or {}
        )
        if launch_resources:
            model = with_launch_resources(model, launch_resources)
            space = candidate_space(model, device, options, pm)
    return model, space, resources, launch_resources


#: fewer candidates than this per worker process are ranked serially: a fork costs about as much as this many
MIN_CANDIDATES_PER_WORKER = 8

#: what forked workers rank: (plugin manager, folded kernel models by fold, launches, device, options)
_FORK_CONTEXT: tuple | None = None


def _estimate(pm, folded, launch, dev, options) -> RankedCandidate:
    """One candidate's metrics and prediction."""
    metrics = pm.hook.perf_estimate(model=folded, launch=launch, device=dev, options=options)
    metrics = _extras(pm, folded, launch, dev, options, metrics)
    prediction = pm.hook.perf_predict(model=folded, launch=launch, device=dev, metrics=metrics, options=options)
    if prediction is None:
        raise PerfError(f"the performance model {options.model!r} gave no prediction for {launch.label}")
    return RankedCandidate(launch, prediction, metrics)


def _estimate_forked(start: int, stop: int) -> list[RankedCandidate]:
    """Candidates ``start .. stop-1`` of the ranking this worker was forked from (`_FORK_CONTEXT`)."""
    pm, folded_models, launches, dev, options = _FORK_CONTEXT
    return [_estimate(pm, folded_models[lc.fold], lc, dev, options) for lc in launches[start:stop]]


def _estimate_all(context: tuple, jobs: int | None, progress) -> list[RankedCandidate]:
    """Every launch of `context` estimated, in order: in `jobs` forked processes (`parallel.run_tasks`) where
    the launches are many enough, else here. The harvest's objects outlive the ranking, so the garbage
    collector is told not to scan them again and again (`gc.freeze`)."""
    global _FORK_CONTEXT
    pm, folded_models, launches, dev, options = context
    workers = min(resolve_jobs(jobs), len(launches) // MIN_CANDIDATES_PER_WORKER)
    gc.freeze()
    try:
        if workers <= 1 or not can_fork():
            return [
                _estimate(pm, folded_models[lc.fold], lc, dev, options)
                for lc in (progress(launches) if progress else launches)
            ]
        chunk = -(-len(launches) // (4 * workers))  # a few chunks per worker: the slow ones even out
        _FORK_CONTEXT = context
        chunks = run_tasks(
            _estimate_forked, [(i, i + chunk) for i in range(0, len(launches), chunk)], jobs=workers, progress=progress
        )
        return [candidate for part in chunks for candidate in part]
    finally:
        _FORK_CONTEXT = None
        gc.unfreeze()


def rank(
    kernel,
    device=DEFAULT_DEVICE,
    *,
    threads: int | None = None,
    blocks=None,
    folds=None,
    backend: str = "auto",
    align: str = "base",
    domain_shape=None,
    model: str = DEFAULT_MODEL,
    prune=(),
    plugin_options=None,
    recipe=None,
    compile_resources: bool = True,
    progress=None,
    jobs: int | None = None,
) -> Ranking:
    """Rank the launch candidates of a kernel for a device, best predicted first.

    Harvests the kernel's accesses (`harvest`), asks the `perf_candidates` plugins for
    the launches (block size x thread folding), rejects those that cannot run (with the
    reason), estimates each candidate's hardware metrics and turns them into a
    prediction with the chosen performance model. Where a `perf_resources` plugin can
    compile the kernel (the pystencils adapter with nvcc or NVRTC), each folding's
    registers per thread limit the blocks per SM.

    Parameters
    ----------
    kernel : pystencils GpuKernel, assignments, KernelModel or an adapter plugin's kernel
        What to rank: a pystencils or lbmpy GPU kernel (``Target.CUDA``), pystencils
        assignments on fixed-size fields, a `KernelModel`, or whatever an installed
        adapter plugin recognises.
    device : str, path or Device, default `launch.DEFAULT_DEVICE` ("A100")
        Library name or alias (``"V100"``, ``"H100"``, ...), the path of a device file,
        or a `Device`.
    threads : int, optional
        Threads per block of the default candidates (1024 for stencils, 512 for LBM
        kernels).
    blocks : sequence of (int, int, int) or str, optional
        Explicit block sizes ``[(bx, by, bz), ...]``, or as the command line writes them
        (``"32x4x8,16x8x8"``), instead of the default space.
    folds : sequence of (int, int, int) or str, optional
        Thread foldings ``[(fx, fy, fz), ...]`` or ``"1x1x2"``; default (1, 1, 1), (1, 2, 1), (1, 1, 2).
    backend : str, default "auto"
        Footprint backend: ``"auto"`` (enumeration), ``"enum"``, ``"isl"`` or a plugin's.
    align : {"base", "interior"}, default "base"
        Field alignment: element 0 or the first interior point on a 256-B boundary
        (see `HarvestOptions`).
    domain_shape : tuple of int, optional
        Array shape of variable-size fields.
    model : str, default "throughput"
        The performance model (`launch.DEFAULT_MODEL`): ``"throughput"`` (the limiters plus
        latency, occupancy, issue, the L1 pipeline and the tail wave), ``"limiters"`` (the
        paper's, a baseline) or a model plugin's name.
    prune : sequence of str, default ()
        Names of candidate filters (e.g. ``("ryoo",)``); the candidates they drop join
        ``ranking.rejected`` with the filter's reason.
    plugin_options : dict, optional
        Values for the options plugins added (`perf_addoption`), by name.
    recipe : optional
        What the adapter regenerates folded variants from (pystencils:
        ``ApplyOptions(assignments, config)``; assignments are their own recipe).
    compile_resources : bool, default True
        Ask the `perf_resources` plugins for each fold's registers (the pystencils
        adapter compiles with nvcc or NVRTC, about a second per fold, cached).
    progress : callable, optional
        Wraps an iterable with a length: the accepted candidates, or the chunks of them that worker
        processes finished (e.g. ``tqdm``).
    jobs : int, optional
        Worker processes that estimate the candidates (forked from this one): None or 0 every core, 1 none.
        The ranking is the same whatever their number.

    Returns
    -------
    Ranking
        The candidates best first (`Ranking.candidates`), the rejected ones with their
        reason (`Ranking.rejected`) and each fold's compiled resources.

    Raises
    ------
    DeviceError
        An unknown device name or a malformed device file.
    HarvestError
        No adapter recognises `kernel`, or it cannot be described (CPU target,
        non-affine address, fields without sizes, ...).
    ConfigurationError
        A malformed option, or a model, filter or backend no installed plugin offers.
    PerfError
        No candidate can run on the device.

    Warns
    -----
    PerfWarning
        A kernel that ranks but cannot run as ranked (`checks`): fields beyond any GPU's memory, code in the
        other vendor's language, an access outside its field, a load of what another thread stores.

    See Also
    --------
    select : the candidate the `perf_select` plugins choose from the ranking.
    pystencils_perf.create_kernel : generate the kernel with the chosen launch.

    Examples
    --------
    >>> import pystencils_perf as pp
    >>> from pystencils_perf.catalog import star_3d
    >>> ranking = pp.rank(star_3d(4, (640, 512, 512)), device="V100")  # doctest: +SKIP
    >>> print(ranking.table(head=10))  # doctest: +SKIP
    """
    from .checks import warn_about_kernel

    dev = get_device(device)
    kernel_model = harvest(kernel, domain_shape=domain_shape, align=align)
    options = RankOptions.of(threads, blocks, folds, backend, model, prune, plugin_options)
    get_backend(backend)  # fail early on an unknown name
    pm = get_plugin_manager()
    check_names("performance model", (options.model,), pm.hook.perf_models())
    check_names("candidate filter", options.prune, pm.hook.perf_prune_filters())
    kernel_model, space, resources, launch_resources = with_measured_resources(
        pm, kernel, recipe, kernel_model, dev, options, compile_resources
    )
    folded_models = {fold: kernel_model.folded(fold) for fold in dict.fromkeys(lc.fold for lc in space.accepted)}
    if space.accepted:  # a kernel that races, or reads outside its fields, ranks as well as a right one: warn first
        warn_about_kernel(kernel_model, space.accepted[0].block, dev)
    ranked = _estimate_all((pm, folded_models, space.accepted, dev, options), jobs, progress)
    rejected = list(space.rejected)
    if not ranked:
        reasons = "; ".join(f"{launch.label}: {reason}" for launch, reason in rejected[:3])
        raise PerfError(f"no launch candidate of kernel {kernel_model.name!r} can run on {dev.name} ({reasons})")
    ranked.sort(key=lambda c: (-c.prediction.lups_per_second, c.launch))
    for dropped in pm.hook.perf_prune(model=kernel_model, device=dev, candidates=list(ranked), options=options):
        for candidate, reason in dropped or ():
            if candidate in ranked:
                ranked.remove(candidate)
                rejected.append((candidate.launch, reason))
    if launch_resources:
        note = launch_resources_note(launch_resources)
    elif kernel_model.registers_by_fold and not resources:
        note = "registers per fold given with the kernel model: " + ", ".join(
            f"{'x'.join(map(str, f))}: {r}" for f, r in kernel_model.registers_by_fold
        )
    elif compile_resources or resources:
        unavailable = None if resources else pm.hook.perf_resources_unavailable(kernel=kernel, device=dev)
        note = resources_note(resources, space.folds, dev, unavailable)
    else:
        note = "occupancy assumed from threads per block: register measurement switched off"
    return Ranking(dev, kernel_model.name, ranked, rejected, resources, note, launch_resources)


def select(ranking: Ranking) -> RankedCandidate:
    """The candidate the `perf_select` plugins choose from a ranking.

    The default selection takes the best predicted candidate unless others lie within
    the model's measured error of it (`Ranking.tied`); among those it takes the one
    with the fewest idle lanes in partly filled warps, then the most resident warps per
    SM, then the least L2 load traffic (a squarer footprint), then the highest
    predicted throughput (`TIE_BREAK`).

    Parameters
    ----------
    ranking : Ranking
        What `rank` returned.

    Returns
    -------
    RankedCandidate
        The chosen candidate: its ``launch`` (block and fold), ``prediction`` and
        ``metrics``.

    Examples
    --------
    >>> best = pp.select(ranking)  # doctest: +SKIP
    >>> best.launch.block, best.launch.fold, best.prediction.limiter  # doctest: +SKIP
    ((16, 4, 16), (1, 2, 1), 'DRAM')
    """
    if not isinstance(ranking, Ranking):
        raise ConfigurationError(f"select takes the Ranking that rank() returns, got {ranking!r:.60}")
    if not ranking.candidates:
        raise ConfigurationError(f"ranking of kernel {ranking.kernel!r} has no candidate to select")
    return get_plugin_manager().hook.perf_select(ranking=ranking)
