"""The ``ryoo`` candidate filter (`perf_prune`): opt-in by name, ``rank(..., prune=("ryoo",))``."""

from __future__ import annotations

from pystencils_perf.hookspecs import hookimpl

from .counts import prune_candidates

FILTER_NAME = "ryoo"


@hookimpl
def perf_prune_filters():
    return {FILTER_NAME: "keep the Pareto front of Ryoo et al.'s Efficiency and Utilization (CGO'08)"}


@hookimpl
def perf_prune(model, device, candidates, options):
    if FILTER_NAME not in options.prune:
        return None
    result = prune_candidates(model, candidates, device.warp_size)
    return [(d.item, d.reason) for d in result.dominated]
