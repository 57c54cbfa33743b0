"""The tuning loop that every entry point shares: measure in the search's order, record, stop.

A `MeasurementSource` times one candidate: the GPU (`adapters.pystencils.tuning.GpuTimer`) or a
Kernel Tuner cache (`tune.replay.ReplaySource`); nothing else differs between
tuning on a GPU and replaying measurements without one.
"""

from __future__ import annotations

import heapq
import math
import numbers
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol

from ..errors import ConfigurationError, MeasurementError
from ..launch import COMPILED_HEAD, LaunchConfig
from .record import RecordKey, RecordStore, TuningRecord, kernel_hash
from .search import ModelGuidedSearch, SearchSettings


@dataclass(frozen=True)
class Candidate:
    """One configuration to tune: its parameters (what a record and Kernel Tuner call it) and the model's time.

    Parameters
    ----------
    params : dict
        Tunable parameters by name (JSON scalars), unique per candidate.
    predicted_seconds : float
        The model's time for the candidate, in a unit common to all candidates.
    launch : LaunchConfig, optional
        The launch it runs with, where a pystencils-perf ranking made it.
    exact : bool, default True
        False where the time is a bound until the candidate's own code is compiled (a launch that
        `replay.spec_candidates` left uncompiled, its occupancy from its threads alone): `tune`'s ``admit``
        compiles it before it is measured.
    """

    params: dict
    predicted_seconds: float
    launch: LaunchConfig | None = None
    exact: bool = True

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params.items())


#: what compiles a candidate whose time is a bound (`Candidate.exact` False) before it is measured: the candidate
#: with its time from its own code, or why that code cannot run (`replay.CompileBeforeMeasuring`)
Admit = Callable[[Candidate], "Candidate | str"]


def next_admitted(
    search: ModelGuidedSearch, candidates: list[Candidate], size: int, admit: Admit | None, rejected: list
) -> list[int]:
    """The search's next `size` picks, each with its own code's time: a pick whose time was a bound is compiled
    first (`admit`), and where that changes its time (`candidates` updated) or it cannot run (appended to
    `rejected` as (candidate, reason), and no candidate any more) the search picks the whole batch again (the
    probes its picks were chosen for given back). A launch the hardware cannot run is never measured, and costs no
    measurement."""
    while True:
        picks, again = search.next_batch(size), False
        for i in picks:
            if admit is None or candidates[i].exact:
                continue
            checked = admit(candidates[i])
            if isinstance(checked, str):
                rejected.append((candidates[i], checked))
                search.reconsider(i, None)
                again = True
                continue
            bound, candidates[i] = candidates[i], replace(checked, exact=True)  # each pick compiled once
            if checked.predicted_seconds != bound.predicted_seconds:
                search.reconsider(i, checked.predicted_seconds)
                again = True
        if not again:
            return picks
        search.unpick(picks)


class MeasurementSource(Protocol):
    """What times candidates: a GPU or a recorded cache."""

    def fingerprint(self) -> dict[str, str]:
        """The device's fingerprint (name, compute capability, driver, runtime, ...) for the record's key."""

    def time_ms(self, candidate: Candidate) -> float | None:
        """The candidate's time in milliseconds, or None where it cannot run."""


def params_key(params: dict) -> str:
    """Parameters as one comparable text, whatever their order."""
    return kernel_hash(params)


@dataclass(frozen=True)
class TuneResult:
    """What a tuning call found and did.

    Parameters
    ----------
    candidates : tuple of Candidate
        Everything that could have been measured.
    record : TuningRecord
        Every measurement so far (this call's and earlier ones'), in order.
    measured_now : int
        How many candidates this call measured (0: all came from the record).
    record_path : Path or None
        Where the record is kept.
    rejected : tuple of (Candidate, str)
        Candidates whose time was a bound and whose own code, compiled before measuring (``admit``), cannot run,
        with the reason: not measured, and not in `candidates`.
    """

    candidates: tuple[Candidate, ...]
    record: TuningRecord
    measured_now: int
    record_path: Path | None
    rejected: tuple[tuple[Candidate, str], ...] = ()

    def candidate(self, params: dict) -> Candidate:
        key = params_key(params)
        return next(c for c in self.candidates if params_key(c.params) == key)

    @property
    def best(self) -> Candidate:
        """The fastest measured candidate."""
        return self.candidate(self.record.best()["params"])

    @property
    def best_ms(self) -> float:
        return self.record.best()["time_ms"]

    def table(self) -> str:
        """Every measurement in order with the model's rank of it (parameters that all of several candidates share
        are said once, above; a lone candidate is named whole), then the best and why tuning stopped."""
        order = {
            params_key(c.params): i for i, c in enumerate(sorted(self.candidates, key=lambda c: c.predicted_seconds), 1)
        }
        names = list(dict.fromkeys(k for c in self.candidates for k in c.params))
        shared = {
            k: self.candidates[0].params.get(k)
            for k in names
            if len(self.candidates) > 1 and len({repr(c.params.get(k)) for c in self.candidates}) == 1
        }

        def label(params: dict) -> str:
            return " ".join(f"{k}={v}" for k, v in params.items() if k not in shared)

        best = self.record.best()
        lines = [f"  every candidate has {' '.join(f'{k}={v}' for k, v in shared.items())}"] if shared else []
        lines.append(f"{'#':>3} {'time ms':>9} {'model rank':>10}  parameters")
        for i, m in enumerate(self.record.measured, 1):
            time = "failed" if m["time_ms"] is None else f"{m['time_ms']:.4f}"
            mark = "*" if m is best else " "
            lines.append(f"{i:>3} {time:>9} {order.get(params_key(m['params']), '-'):>10} {mark}{label(m['params'])}")
        lines.append(
            f"best: {label(best['params'])} at {best['time_ms']:.4f} ms (* above); {len(self.record.measured)} "
            f"of {len(self.candidates)} candidates measured, {self.measured_now} by this call"
            + (f", {len(self.rejected)} rejected once compiled" if self.rejected else "")
            + f"; stopped: {self.record.stop_reason}"
        )
        return "\n".join(lines)


def _progress_bar(total: int, initial: int):
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="run",
        desc="tuning",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        leave=False,
    )


class FirstMeasurement:
    """A `spec_candidates` ``meanwhile``: measures the best predicted candidate ranked so far, while the rest of
    the space is ranked, and keeps it for `tune` (``measured_before``). A candidate whose time is a bound is compiled
    first (`admit`, as `tune` does): one its code cannot run is passed over."""

    def __init__(self, source: MeasurementSource, admit: Admit | None = None):
        self.source = source
        self.admit = admit
        self.measured: tuple[tuple[Candidate, float | None], ...] = ()

    def __call__(self, candidates: list[Candidate]) -> None:
        if (pick := first_admitted(candidates, self.admit)) is not None:
            self.measured = ((pick, self.source.time_ms(pick)),)


def first_admitted(candidates: list[Candidate], admit: Admit | None) -> Candidate | None:
    """The best predicted of `candidates` whose code can run, or None: a candidate whose time is a bound is compiled
    first (`admit`) and goes back among the others with its own time, so that one whose code turns out slower
    (registers, spills) than the next bound is not the one measured; after `FIRST_COMPILES` compiles, the best
    compiled so far (the rest are ranked in order meanwhile)."""
    waiting = [(c.predicted_seconds, params_key(c.params), c) for c in candidates]
    heapq.heapify(waiting)
    compiled: list[tuple[float, str, Candidate]] = []
    while waiting:
        _, key, pick = heapq.heappop(waiting)
        if pick.exact or admit is None:
            return pick
        if len(compiled) >= FIRST_COMPILES:
            return min(compiled)[2]
        if not isinstance(checked := admit(pick), str):
            entry = (checked.predicted_seconds, key, replace(checked, exact=True))
            compiled.append(entry)
            heapq.heappush(waiting, entry)
    return None


#: how many candidates whose times are bounds `first_admitted` compiles at most
FIRST_COMPILES = COMPILED_HEAD


def _positive_finite(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value < math.inf


def _checked_time(candidate: Candidate, time_ms: float | None) -> float | None:
    """A measured time as the search takes it (None: the candidate failed to run), or a one-line error."""
    if time_ms is not None and not _positive_finite(time_ms):
        raise MeasurementError(
            f"candidate {params_key(candidate.params)}: the measured time {time_ms!r} ms is not a "
            "positive finite number"
        )
    return time_ms


def tune(
    candidates: list[Candidate],
    source: MeasurementSource,
    *,
    budget: int,
    kernel: str,
    store: RecordStore | None = None,
    settings: SearchSettings = SearchSettings(),
    early_stop: bool = True,
    measured_before: tuple[tuple[Candidate, float | None], ...] = (),
    admit: Admit | None = None,
) -> TuneResult:
    """Measure up to `budget` candidates (counting those of an earlier call's record) in the search's order.

    Parameters
    ----------
    candidates : list of Candidate
        What may be measured, each with the model's predicted time.
    source : MeasurementSource
        What times a candidate: the GPU, or a recorded cache (`replay.ReplaySource`).
    budget : int
        The most measurements in the record, this call's and earlier ones'.
    kernel : str
        The kernel's hash (`record.kernel_hash` of its description and candidates), half the record's key.
    store : RecordStore, optional
        Where records are kept (`RecordStore()`: the user's cache directory); None keeps none.
    settings : SearchSettings
        The search's constants.
    early_stop : bool, default True
        Stop before the budget when the search says nothing better is likely.
    measured_before : sequence of (Candidate, time in ms or None)
        Measurements this call made before the search began (while the space was being ranked,
        `FirstMeasurement`): recorded and learnt from like the search's own.
    admit : callable, optional
        Compiles a candidate whose time is a bound (`Candidate.exact` False) before it is measured
        (`next_admitted`; `replay.CompileBeforeMeasuring`); without it such a candidate is measured as it is.

    Returns
    -------
    TuneResult
        Every measurement and the fastest. A record whose tuning stopped by its rule, or reached `budget`,
        is returned as it is: nothing is measured.

    Raises
    ------
    ConfigurationError
        A budget below 1, no candidates, or none of the measured candidates ran.
    KeyboardInterrupt
        Raised again after what was measured so far is saved, marked incomplete: the next call goes on.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ConfigurationError(f"the tuning budget must be at least 1 measurement, got {budget!r}")
    if not candidates:
        raise ConfigurationError("nothing to tune: every candidate was rejected")
    for c in candidates:
        if not _positive_finite(c.predicted_seconds):
            raise ConfigurationError(
                f"candidate {params_key(c.params)}: the predicted time {c.predicted_seconds!r} "
                "is not a positive finite number"
            )
    keys = [params_key(c.params) for c in candidates]
    if len(set(keys)) != len(keys):
        raise ConfigurationError("two candidates have the same parameters; the record could not tell them apart")
    index = {k: i for i, k in enumerate(keys)}
    candidates, rejected = list(candidates), []
    record_key = RecordKey(kernel, source.fingerprint())
    record = (store.load(record_key) if store else None) or TuningRecord(record_key)
    search = ModelGuidedSearch([c.predicted_seconds for c in candidates], [c.params for c in candidates], settings)
    known = [m for m in record.measured if params_key(m["params"]) in index]
    record.measured = known
    for m in known:
        search.observe(index[params_key(m["params"])], m["time_ms"])

    def finished() -> tuple[str, str]:
        """Why tuning stops now (a kind for the record, and a sentence), or empty strings."""
        if not search.unmeasured.size:
            return "all", f"every one of the {len(candidates) - len(rejected)} candidates measured"
        if len(record.measured) >= budget:
            return "budget", f"the budget of {budget} measurements is spent"
        if early_stop and search.done():
            return "rule", (
                f"no unmeasured candidate has a chance above {settings.stop_probability:.0%} to be "
                f"{settings.stop_within:.0%} faster than the best measured"
            )
        return "", ""

    measured_now = 0
    for candidate, time_ms in measured_before:  # within the budget, and once each
        _checked_time(candidate, time_ms)
        if (
            len(record.measured) < budget
            and params_key(candidate.params) in index
            and index[params_key(candidate.params)] not in search.measured
        ):
            search.observe(index[params_key(candidate.params)], time_ms)
            record.measured.append({"params": candidate.params, "time_ms": time_ms})
            record.complete = False
            measured_now += 1
    done = record.complete and (record.stopped_by != "budget" or len(record.measured) >= budget)
    if not done:
        record.complete = False
        bar = _progress_bar(min(budget, len(candidates)), len(record.measured))
        try:
            while not (stop := finished())[0]:
                picks = next_admitted(search, candidates, 1, admit, rejected)
                if not picks:  # the last ones could not run
                    continue
                pick = candidates[picks[0]]
                time_ms = _checked_time(pick, source.time_ms(pick))
                search.observe(index[params_key(pick.params)], time_ms)
                record.measured.append({"params": pick.params, "time_ms": time_ms})
                measured_now += 1
                bar.update(1)
                bar.set_postfix(best_ms=f"{search.best()[1]:.4g}" if search.best() else "-")
                if store:
                    store.save(record)
        except KeyboardInterrupt:
            record.stopped_by, record.stop_reason = (
                "interrupted",
                f"interrupted after {len(record.measured)} measurements",
            )
            if store:
                store.save(record)
            raise
        finally:
            bar.close()
        (record.stopped_by, record.stop_reason), record.complete = stop, True
    if record.best() is None:
        raise ConfigurationError(f"none of the {len(record.measured)} measured candidates ran")
    path = store.save(record) if store and not done else (store.path(record_key) if store else None)
    runnable = tuple(c for i, c in enumerate(candidates) if i not in search.discarded)
    return TuneResult(runnable, record, measured_now, path, tuple(rejected))
