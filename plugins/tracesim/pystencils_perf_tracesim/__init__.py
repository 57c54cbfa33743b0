"""pystencils-perf-tracesim: a trace-driven simulation of one SM's resident blocks (Wang et al., HPCA'19).

`simulate(model_or_kernel, launch, device)` returns the simulated data volumes,
named like the analytic estimator's metrics, and the predicted kernel time
(Eq. 8). Installed, the plugin answers `perf_predict` only for
``rank(..., model="tracesim")``.
"""

import importlib

#: public name -> the module that defines it
_PUBLIC = {
    "LATENCIES": ".latencies",
    "MemoryLatencies": ".latencies",
    "latencies_for": ".latencies",
    "SimulationOptions": ".simulator",
    "SimulationResult": ".simulator",
    "simulate": ".simulator",
}


def __getattr__(name):
    """A public name, imported from its module when first used (PEP 562): the plugin (`plugin`) loads without numpy."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})


__all__ = ["LATENCIES", "MemoryLatencies", "SimulationOptions", "SimulationResult", "latencies_for", "simulate"]
