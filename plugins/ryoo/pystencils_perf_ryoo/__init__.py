"""Ryoo et al.'s (CGO'08) Efficiency/Utilization metrics and their Pareto filter for pystencils-perf."""

from .counts import candidates_metrics, instructions_per_thread, prune_candidates
from .g80 import g80_occupancy, g80_parameters, g80_peak_gflops
from .metrics import RyooInputs, RyooMetrics, efficiency, ryoo_metrics, utilization, warps_per_block
from .pareto import Dominated, ParetoResult, pareto_filter

__all__ = [
    "Dominated",
    "ParetoResult",
    "RyooInputs",
    "RyooMetrics",
    "candidates_metrics",
    "efficiency",
    "g80_occupancy",
    "g80_parameters",
    "g80_peak_gflops",
    "instructions_per_thread",
    "pareto_filter",
    "prune_candidates",
    "ryoo_metrics",
    "utilization",
    "warps_per_block",
]
