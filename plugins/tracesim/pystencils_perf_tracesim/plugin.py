"""The opt-in `perf_predict` model ``"tracesim"``: answers only when ``options.model == "tracesim"``."""

from __future__ import annotations

from pystencils_perf.hookspecs import hookimpl

MODEL_NAME = "tracesim"


def simulate(model, launch, device):
    """`simulator.simulate`, imported when the model is asked for: loading the plugin imports no numpy."""
    from .simulator import simulate

    return simulate(model, launch, device)


@hookimpl
def perf_models():
    return {MODEL_NAME: "trace-driven simulation of one SM's resident blocks with LRU L1/L2 (Wang et al., HPCA'19)"}


@hookimpl
def perf_predict(model, launch, device, metrics, options):
    if getattr(options, "model", None) != MODEL_NAME:
        return None
    return simulate(model, launch, device).prediction()
