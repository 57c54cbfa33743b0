"""Ryoo's inputs for pystencils-perf candidates: instructions and regions per thread, threads, warps, blocks per SM.

Instructions per thread are an approximation from the kernel model, not from
SASS: one instruction per distinct load and store a thread executes (folded
points share the loads they have in common, as the generated code does) plus one
per floating-point operation of the points it updates. Integer and address
arithmetic is not counted, and an FMA counts as two. An adapter that knows
better (PTX/SASS counts, barriers) puts ``ryoo_instructions_per_thread`` and
``ryoo_regions_per_thread`` into the candidate's ``metrics.extras``
(`perf_estimate_extras`), and those are used instead.

Regions = barriers + 1: pystencils kernels have no barrier, so one region.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from pystencils_perf.errors import ConfigurationError

from .metrics import RyooInputs, RyooMetrics, ryoo_metrics, warps_per_block
from .pareto import ParetoResult, pareto_filter

#: names of the per-candidate counts an adapter may provide in `Metrics.extras`
INSTRUCTIONS_EXTRA = "ryoo_instructions_per_thread"
REGIONS_EXTRA = "ryoo_regions_per_thread"


def points_per_thread(model) -> int:
    """Lattice updates one thread performs: the product of its loops' trip counts (1 without loops)."""
    return math.prod(len(loop.values) for loop in model.loops if loop.updates)


def distinct_accesses_per_thread(model) -> int:
    """Load and store instructions of one thread: distinct (field, kind, address) over all its loop iterations."""
    counters = [loop.counter for loop in model.loops]
    seen = set()
    for values in itertools.product(*(loop.values for loop in model.loops)):
        subs = dict(zip(counters, values))
        for access in model.accesses:
            seen.add((access.field, access.kind, access.address.xreplace(subs) if subs else access.address))
    return len(seen)


def instructions_per_thread(model) -> float:
    """The approximation of the module docstring for a (folded) `KernelModel`."""
    return distinct_accesses_per_thread(model) + model.flops_per_lup * points_per_thread(model)


def candidate_inputs(folded_model, candidate, warp_size: int = 32) -> RyooInputs:
    """Ryoo's inputs of one ranked candidate, the kernel model folded as its launch says."""
    metrics, launch = candidate.metrics, candidate.launch
    instructions = metrics.extras.get(INSTRUCTIONS_EXTRA)
    regions = metrics.extras.get(REGIONS_EXTRA)
    if instructions is None:
        instructions = instructions_per_thread(folded_model)
    if instructions <= 0:
        raise ConfigurationError(
            f"candidate {launch.label}: kernel {folded_model.name!r} has no loads, stores or flops to count as instructions"
        )
    if metrics.blocks_per_sm < 1:
        raise ConfigurationError(f"candidate {launch.label}: no block fits on an SM ({metrics.occupancy_limited_by})")
    return RyooInputs(
        instructions_per_thread=float(instructions),
        regions_per_thread=int(regions) if regions is not None else 1,
        threads=math.prod(metrics.grid) * launch.threads_per_block,
        warps_per_block=warps_per_block(launch.threads_per_block, warp_size),
        blocks_per_sm=int(metrics.blocks_per_sm),
    )


def candidates_metrics(model, candidates: Sequence, warp_size: int = 32) -> list[RyooMetrics]:
    """Efficiency and Utilization of every ranked candidate; `model` is the unfolded kernel model."""
    folded = {}
    out = []
    for candidate in candidates:
        fold = candidate.launch.fold
        if fold not in folded:
            folded[fold] = model.folded(fold) if tuple(model.fold) == (1, 1, 1) else model
        out.append(ryoo_metrics(candidate_inputs(folded[fold], candidate, warp_size)))
    return out


def prune_candidates(model, candidates: Sequence, warp_size: int = 32) -> ParetoResult:
    """The Pareto filter on ranked candidates (`RankedCandidate`s of one kernel)."""
    return pareto_filter(list(candidates), candidates_metrics(model, candidates, warp_size))
