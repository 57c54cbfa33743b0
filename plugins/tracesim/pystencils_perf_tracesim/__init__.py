"""pystencils-perf-tracesim: a trace-driven simulation of one SM's resident blocks (Wang et al., HPCA'19).

`simulate(model_or_kernel, launch, device)` returns the simulated data volumes,
named like the analytic estimator's metrics, and the predicted kernel time
(Eq. 8). Installed, the plugin answers `perf_predict` only for
``rank(..., model="tracesim")``.
"""

from pystencils_perf.lazy import lazy_names

#: public name -> the module that defines it
_PUBLIC = {
    "LATENCIES": ".latencies",
    "MemoryLatencies": ".latencies",
    "latencies_for": ".latencies",
    "SimulationOptions": ".simulator",
    "SimulationResult": ".simulator",
    "simulate": ".simulator",
}


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

__all__ = ["LATENCIES", "MemoryLatencies", "SimulationOptions", "SimulationResult", "latencies_for", "simulate"]
