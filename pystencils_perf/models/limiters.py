"""The built-in ``limiters`` model (Ernst et al., JPDC 2023, sec. II.A): throughput is the minimum over the
limiters (`predict.limiter_times`); every limiter's time per lattice update is kept, not just the winner's."""

from __future__ import annotations

from ..hookspecs import hookimpl
from ..predict import Prediction, limiter_times

#: the limiter model's measured error, as a fraction: its DRAM load MAPE on the V100 star stencil data
#: (docs/model/index.md, "The limiter model"), the volume that limits every candidate there. Candidates this
#: close to the best are a tie the model cannot order.
LIMITERS_RELATIVE_ERROR = 0.0783

MODEL_NAME = "limiters"


@hookimpl
def perf_models():
    return {MODEL_NAME: "minimum over the FP, L1, L2 and DRAM limiters (the paper's model)"}


@hookimpl(trylast=True)
def perf_predict(model, launch, device, metrics, options):
    if options.model != MODEL_NAME:
        return None
    times = limiter_times(model, device, metrics)
    limiter = max(times, key=times.get)
    return Prediction(1.0 / times[limiter], limiter, times, LIMITERS_RELATIVE_ERROR)
