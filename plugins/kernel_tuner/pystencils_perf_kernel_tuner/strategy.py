"""A Kernel Tuner search strategy that measures in the model's order and learns from every measurement.

Kernel Tuner (1.x) accepts any object with a ``tune(searchspace, runner,
tuning_options)`` method as ``strategy``. `ModelGuided` ranks the search
space with pystencils-perf (the SPEC describes the kernel of each combination
of the non-block parameters, as for ``pystencils-perf validate``), then asks
Kernel Tuner's runner for the candidates that `pystencils_perf.tune.search`
picks, one batch at a time, until ``max_fevals`` is spent or nothing better is
likely. Configurations the SPEC does not describe, or that the model says the
device cannot run, are never measured.

The runner is Kernel Tuner's: the sequential one on a GPU, the simulation one
on a cache (``simulation_mode=True``), or the Ray-based parallel one. Kernel
Tuner 1.5 gives the parallel runner's workers only to its own strategies
listed in ``kernel_tuner.interface._STRATEGY_PARALLEL``; `ModelGuided` asks for
``batch`` candidates per call, so it fills that many workers where a runner
has them (README: "Several GPUs").
"""

from __future__ import annotations

import sys
from pathlib import Path

from pystencils_perf.measure.kernel_tuner import TunableSpec, load_tunable_spec
from pystencils_perf.tune.replay import spec_candidates
from pystencils_perf.tune.search import ModelGuidedSearch, SearchSettings
from pystencils_perf.tune.tuner import Candidate


class ModelGuided:
    """``kernel_tuner.tune_kernel(..., strategy=ModelGuided(spec, device))``.

    Parameters
    ----------
    spec : str, Path or TunableSpec
        A SPEC file (or a loaded `TunableSpec`) with ``kernel_for(params)`` and ``lattice_updates``.
    device : str, path or Device
        The pystencils-perf device (name, alias or file) the model predicts for.
    model : str, default "throughput"
        The performance model whose order the search starts from.
    batch : int, default 1
        Candidates asked of the runner at once (one per parallel worker).
    early_stop : bool, default True
        Stop before ``max_fevals`` when nothing better is likely (`SearchSettings`).
    settings : SearchSettings
        The search's constants.
    candidates : list of Candidate, optional
        The search space's configurations as `pystencils_perf.tune.replay.spec_candidates` predicted them, to
        rank a space once for several tuning runs (default: ranked by each `tune` call).
    """

    def __init__(self, spec: TunableSpec | str | Path, device, *, model: str = "throughput", batch: int = 1,
                 early_stop: bool = True, settings: SearchSettings = SearchSettings(),
                 candidates: list[Candidate] | None = None):
        self.spec = spec if isinstance(spec, TunableSpec) else load_tunable_spec(spec)
        self.device, self.model, self.batch = device, model, batch
        self.early_stop, self.settings, self.prepared = early_stop, settings, candidates
        #: the candidates of the last `tune` call, in searchspace order, and why it stopped
        self.candidates, self.stop_reason = [], ""

    def allow_parallel_workers(self) -> ModelGuided:
        """Let Kernel Tuner's parallel runner give this strategy all its workers (Kernel Tuner 1.5 gives them only
        to the strategies in its private ``_STRATEGY_PARALLEL`` list); returns self."""
        from kernel_tuner import interface

        if not any(s is self for s in interface._STRATEGY_PARALLEL):
            interface._STRATEGY_PARALLEL.append(self)
        return self

    def tune(self, searchspace, runner, tuning_options):
        from kernel_tuner.strategies.common import CostFunc
        from kernel_tuner.util import StopCriterionReached

        names = list(searchspace.tune_params)
        configurations = [dict(zip(names, config)) for config in searchspace.list]
        if self.prepared is None:
            self.candidates = spec_candidates(configurations, self.spec, self.device, model=self.model).candidates
        else:
            space = {tuple(config) for config in searchspace.list}
            self.candidates = [c for c in self.prepared if tuple(c.params.get(n) for n in names) in space]
        search = ModelGuidedSearch([c.predicted_seconds for c in self.candidates],
                                   [c.params for c in self.candidates], self.settings)
        cost_func = CostFunc(searchspace, tuning_options, runner)
        higher = tuning_options.objective_higher_is_better
        higher = higher[0] if isinstance(higher, (list, tuple)) else higher
        self.stop_reason = "every candidate measured"
        try:
            while search.unmeasured.size:
                if self.early_stop and search.best() is not None and search.done():
                    self.stop_reason = "nothing better is likely"
                    break
                picks = search.next_batch(self.batch)
                costs = cost_func.eval_all([tuple(self.candidates[i].params[n] for n in names) for i in picks],
                                           check_restrictions=False)
                for i, cost in zip(picks, costs):  # the search minimises a time: a rate becomes its inverse
                    search.observe(i, None if cost >= sys.float_info.max else (-1.0 / cost if higher else cost))
        except StopCriterionReached:
            self.stop_reason = "Kernel Tuner's budget is spent"
        return cost_func.results
