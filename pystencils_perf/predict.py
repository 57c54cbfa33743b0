"""The limiter performance model (Ernst et al., JPDC 2023, sec. II.A), a built-in `perf_predict` plugin.

Throughput in lattice updates per second is the minimum over four limiters:
floating point, L1 (bank-conflict cycles), L2 bandwidth and DRAM bandwidth.
Every limiter's time per lattice update is kept, not just the winner's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hookspecs import hookimpl


#: the limiter model's measured error, as a fraction: its DRAM load MAPE on the V100 star stencil data
#: (7.83 %, validation/v100/report.md), the volume that limits every candidate there. Candidates this
#: close to the best are a tie the model cannot order.
LIMITERS_RELATIVE_ERROR = 0.0783


@dataclass(frozen=True)
class Prediction:
    """A candidate's predicted throughput and the time of every limiter (seconds per lattice update).

    `relative_error` is the model's measured error (a fraction): within it of the
    best, candidates are tied, and the ranking says so.
    """

    lups_per_second: float
    limiter: str
    seconds_per_lup: dict[str, float]
    relative_error: float = 0.0

    @property
    def glups(self) -> float:
        return self.lups_per_second / 1e9


def limiter_times(model, device, metrics) -> dict[str, float]:
    """Seconds per lattice update that each limiter alone would need."""
    double = max((f.element_bytes for f in model.fields), default=8) >= 8
    peak_flops = (device.fp64_peak_gflops if double else device.fp32_peak_gflops) * 1e9
    return {
        "FP": metrics.flops_per_lup / peak_flops,
        "L1": metrics.l1_cycles_per_lup / (device.sm_count * device.clock_ghz * 1e9),
        "L2": (metrics.l2_load_bytes_per_lup + metrics.l2_store_bytes_per_lup) / (device.l2_bandwidth_gbs * 1e9),
        "DRAM": (metrics.dram_load_bytes_per_lup + metrics.dram_store_bytes_per_lup) / (device.dram_bandwidth_gbs * 1e9),
    }


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
