"""A Kernel Tuner search strategy that measures in the model's order and learns from every measurement.

Kernel Tuner (1.x) accepts any object with a ``tune(searchspace, runner,
tuning_options)`` method as ``strategy``. `ModelGuided` ranks the search
space with pystencils-perf (the SPEC describes the kernel of each combination
of the non-block parameters, as for ``pystencils-perf validate``), then asks
Kernel Tuner's runner for the candidates that `pystencils_perf.tune.search`
picks, one batch at a time, until ``max_fevals`` is spent or nothing better is
likely. Configurations the SPEC does not describe start from no prediction;
those the model says the device cannot run are never measured.

The runner is Kernel Tuner's: the sequential one on a GPU, the simulation one
on a cache (``simulation_mode=True``), or the Ray-based parallel one. Kernel
Tuner 1.5 gives the parallel runner's workers only to its own strategies
listed in ``kernel_tuner.interface._STRATEGY_PARALLEL``; `ModelGuided` asks for
``batch`` candidates per call, so it fills that many workers where a runner
has them (README: "Several GPUs").
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

from pystencils_perf.errors import ConfigurationError
from pystencils_perf.launch import COMPILED_HEAD
from pystencils_perf.measure.kernel_tuner import TunableSpec, load_tunable_spec
from pystencils_perf.tune.replay import CompileBeforeMeasuring, SpecCandidates, spec_candidates
from pystencils_perf.tune.search import ModelGuidedSearch, SearchSettings
from pystencils_perf.tune.tuner import Candidate, first_admitted, next_admitted, params_key


class ModelGuided:
    """``kernel_tuner.tune_kernel(..., strategy=ModelGuided(spec, device))``.

    Parameters
    ----------
    spec : str, Path, TunableSpec or None
        A SPEC file (or a loaded `TunableSpec`) with ``kernel_for(params)`` and ``lattice_updates``. Without one
        (a kernel no SPEC describes), or for configurations it does not describe, the search starts from no
        prediction (every candidate alike) and learns from the measurements alone.
    device : str, path or Device, optional
        The pystencils-perf device (name, alias or file) the model predicts for; needed with a SPEC.
    model : str, optional
        The performance model whose order the search starts from (default: `pystencils_perf.launch.DEFAULT_MODEL`).
    batch : int, default 1
        Candidates asked of the runner at once (one per parallel worker).
    early_stop : bool, default True
        Stop before ``max_fevals`` when nothing better is likely (`SearchSettings`).
    settings : SearchSettings
        The search's constants.
    predictions : SpecCandidates, optional
        The search space as `pystencils_perf.tune.replay.spec_candidates` predicted it (an earlier call's
        `predictions`), to rank a space once for several tuning runs (default: ranked by each `tune` call).
    compile_all : bool, default False
        Where the SPEC's kernels compile per launch (a CUDA description's ``block_size_names``): compile every
        launch of the space, not only those that can be among the `pystencils_perf.launch.COMPILED_HEAD` fastest
        (``compile_until_certain`` of `spec_candidates`; seconds per launch).
    """

    def __init__(
        self,
        spec: TunableSpec | str | Path | None = None,
        device=None,
        *,
        model: str | None = None,
        batch: int = 1,
        early_stop: bool = True,
        settings: SearchSettings = SearchSettings(),
        predictions: SpecCandidates | None = None,
        compile_all: bool = False,
    ):
        if spec is not None and device is None:
            raise ConfigurationError("ModelGuided needs the device its SPEC's kernel is predicted for")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ConfigurationError(f"ModelGuided: batch = {batch!r} is not a positive integer (candidates at once)")
        if not isinstance(settings, SearchSettings):
            raise ConfigurationError(f"ModelGuided: settings = {settings!r:.60} is not a SearchSettings")
        for name, value in (("early_stop", early_stop), ("compile_all", compile_all)):
            if not isinstance(value, bool):
                raise ConfigurationError(f"ModelGuided: {name} = {value!r} is not True or False")
        self.spec = spec if spec is None or isinstance(spec, TunableSpec) else load_tunable_spec(spec)
        self.device, self.model, self.batch = device, model, batch
        self.early_stop, self.settings, self.predictions = early_stop, settings, predictions
        self.compile_all = compile_all
        #: the candidates of the last `tune` call (predicted first), and why it stopped
        self.candidates, self.stop_reason = [], ""
        #: the candidates of the last `tune` call that were compiled before measuring and cannot run, with the reason
        #: (never measured)
        self.rejected: list[tuple[Candidate, str]] = []

    def allow_parallel_workers(self) -> ModelGuided:
        """Let Kernel Tuner's parallel runner give this strategy all its workers (Kernel Tuner 1.5 gives them only
        to the strategies in its private ``_STRATEGY_PARALLEL`` list); returns self."""
        from kernel_tuner import interface

        if not any(s is self for s in interface._STRATEGY_PARALLEL):
            interface._STRATEGY_PARALLEL.append(self)
        return self

    def _candidates(self, configurations: list[dict], meanwhile=None) -> list[Candidate]:
        """The model's candidates among `configurations`, then those no prediction covers at the predictions'
        geometric mean; configurations the model says the device cannot run are left out. `meanwhile` is
        `spec_candidates`' (a measurement while a slow space is ranked)."""
        if self.predictions is None and self.spec is not None:
            self.predictions = spec_candidates(
                configurations,
                self.spec,
                self.device,
                model=self.model,
                meanwhile=meanwhile,
                compile_until_certain=None if self.compile_all else COMPILED_HEAD,
            )
        predicted = self.predictions or SpecCandidates([], [])
        keys = {params_key(p) for p in configurations}
        known = [c for c in predicted.candidates if params_key(c.params) in keys]
        covered = {params_key(c.params) for c in known} | {params_key(p) for p, _ in predicted.rejected}
        level = math.exp(statistics.fmean(math.log(c.predicted_seconds) for c in known)) if known else 1.0
        return known + [Candidate(p, level) for p in configurations if params_key(p) not in covered]

    def tune(self, searchspace, runner, tuning_options):
        from kernel_tuner.strategies.common import CostFunc
        from kernel_tuner.util import StopCriterionReached

        names = list(searchspace.tune_params)
        cost_func = CostFunc(searchspace, tuning_options, runner)
        higher = tuning_options.objective_higher_is_better
        higher = higher[0] if isinstance(higher, (list, tuple)) else higher
        early = {}  # the measurement made while a slow space was ranked

        def as_time(cost: float) -> float | None:  # the search minimises a time: a rate becomes its inverse
            return None if cost >= sys.float_info.max else (-1.0 / cost if higher else cost)

        # a launch `spec_candidates` left uncompiled is compiled before it is measured: one its code cannot run never is
        admit = CompileBeforeMeasuring(self.spec, self.device, model=self.model) if self.spec is not None else None
        self.rejected = []

        def measure_meanwhile(candidates: list[Candidate]) -> None:
            if (pick := first_admitted(candidates, admit)) is not None:
                early[params_key(pick.params)] = cost_func.eval_all(
                    [tuple(pick.params[n] for n in names)], check_restrictions=False
                )[0]

        self.stop_reason = "every candidate measured"
        try:  # Kernel Tuner's budget may be spent by the measurement made while the space is ranked
            configurations = [dict(zip(names, config)) for config in searchspace.list]
            self.candidates = self._candidates(configurations, measure_meanwhile)
            search = ModelGuidedSearch(
                [c.predicted_seconds for c in self.candidates], [c.params for c in self.candidates], self.settings
            )
            for i, c in enumerate(self.candidates):
                if params_key(c.params) in early:
                    search.observe(i, as_time(early[params_key(c.params)]))
            while search.unmeasured.size:
                if self.early_stop and search.done():
                    self.stop_reason = "nothing better is likely"
                    break
                picks = next_admitted(search, self.candidates, self.batch, admit, self.rejected)
                if not picks:  # the last ones could not run
                    continue
                costs = cost_func.eval_all(
                    [tuple(self.candidates[i].params[n] for n in names) for i in picks], check_restrictions=False
                )
                for i, cost in zip(picks, costs):
                    search.observe(i, as_time(cost))
        except StopCriterionReached:
            self.stop_reason = "Kernel Tuner's budget is spent"
        return cost_func.results
