"""pystencils-perf-tracesim: a trace-driven simulation of one SM's resident blocks (Wang et al., HPCA'19).

`simulate(model_or_kernel, launch, device)` returns the simulated data volumes,
named like the analytic estimator's metrics, and the predicted kernel time
(Eq. 8). Installed, the plugin answers `perf_predict` only for
``rank(..., model="tracesim")``.
"""

from .latencies import LATENCIES, MemoryLatencies, latencies_for
from .simulator import SimulationOptions, SimulationResult, simulate

__all__ = ["LATENCIES", "MemoryLatencies", "SimulationOptions", "SimulationResult", "latencies_for", "simulate"]
