"""Wang et al. (HPCA'19) Tables IV and V as printed, and what can be recomputed from them.

The rows are the paper's data (measured errors and times on four GPUs of 2018);
the averages and speedups are computed here, so that the printed summary lines
can be checked against their own rows (SEED_MODELS.md 2(d)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pystencils_perf.errors import ConfigurationError

GPUS = ("K600", "GTX645", "K620", "940M")


@dataclass(frozen=True)
class TableIVRow:
    """One kernel: configurations, trace length, MAPE (%) per GPU, simulation time per run (ms)."""

    kernel: str
    configurations: int
    trace_length: int
    mape_percent: tuple[float, float, float, float]  # in the order of GPUS
    ms_per_run: float


TABLE_IV = (
    TableIVRow("bpnn_adjust_weights", 11450, 41, (24.24, 24.34, 22.16, 22.12), 23.03),
    TableIVRow("bpnn_layerforward", 11450, 74, (19.38, 27.05, 21.14, 26.55), 40.08),
    TableIVRow("BFS_1", 14028, 79, (11.55, 7.969, 10.16, 20.47), 60.09),
    TableIVRow("BFS_2", 14028, 7, (14.43, 20.24, 9.879, 11.73), 10.4),
    TableIVRow("findK", 42000, 100, (35.68, 31.12, 8.941, 12.86), 72.93),
    TableIVRow("findRangeK", 42000, 163, (40.63, 39.8, 13.42, 13.42), 119.66),
    TableIVRow("compute_flux", 3072, 616, (15.32, 19.81, 9.077, 14.41), 77.55),
    TableIVRow("compute_step_factor", 3072, 33, (12.83, 27.76, 43.04, 3.315), 14.01),
    TableIVRow("initialize_variables", 3072, 18, (11.89, 9.149, 29.65, 7.902), 15.38),
    TableIVRow("memset", 12, 2, (8.085, 25.8, 6.803, 18.83), 7.081),
    TableIVRow("time_step", 3072, 31, (5.191, 18.38, 18.04, 16.2), 23.78),
    TableIVRow("hotspot", 1024, 22093, (15.36, 14.21, 4.325, 9.389), 4130.09),
    TableIVRow("kmeans_c", 40000, 2338, (12.95, 22.99, 19.06, 20.37), 824.6),
    TableIVRow("kmeans_swap", 40000, 533, (10.23, 19.8, 15.76, 17.74), 219.67),
    TableIVRow("lud_internal", 8267, 108, (17.41, 23.18, 8.278, 34.18), 45.1),
    TableIVRow("nearestNeighbor", 66, 9, (10.89, 26.84, 7.09, 12.38), 6.03),
    TableIVRow("nw_kernel1", 19408, 1431, (9.228, 21.88, 9.09, 25.86), 65.27),
    TableIVRow("nw_kernel2", 19408, 1431, (9.239, 24.69, 8.551, 24.87), 63.99),
    TableIVRow("particle_naive", 104, 52387, (19.59, 16.99, 13.82, 11.93), 11751.93),
    TableIVRow("dynproc", 31025, 1469, (3.716, 6.56, 14.33, 9.737), 1055.97),
)

#: the paper's printed average row of Table IV and its overall MAPE (abstract): what the rows must give
TABLE_IV_PRINTED = {
    "K600": 15.39,
    "GTX645": 21.43,
    "K620": 14.63,
    "940M": 16.71,
    "overall": 17.04,
    "configurations": 306_558,
    "ms_per_run": 931.33,
}

#: Table V: simulation time (ms) of GPGPU-Sim and of Wang et al.'s simulator per Rodinia application
TABLE_V_MS = {
    "bfs": (4_517_000.0, 60.09 + 10.40),  # "ours": BFS_1 + BFS_2 of Table IV
    "hotspot": (200_000.0, 4130.09),
    "lud": (168_000.0, 45.10),
    "nn": (3_000.0, 6.030),
    "nw": (1_673_000.0, 65.27 + 63.99),  # nw_kernel1 + nw_kernel2
    "pathfinder": (280_000.0, 1055.97),
}
#: the geometric-mean row as printed: GPGPU-Sim ms, ours ms, speedup
TABLE_V_PRINTED_GEOMEAN = (244_433.52, 148.69, 164.39)


@dataclass(frozen=True)
class TableIVAverages:
    mape_percent_per_gpu: dict[str, float]
    overall_mape_percent: float
    configurations: int
    mean_configurations: float
    mean_trace_length: float
    mean_ms_per_run: float


def table_iv_averages(rows=TABLE_IV) -> TableIVAverages:
    """The average row of Table IV from its kernels: mean MAPE per GPU, overall, totals."""
    n = len(rows)
    per_gpu = {gpu: sum(r.mape_percent[i] for r in rows) / n for i, gpu in enumerate(GPUS)}
    return TableIVAverages(
        mape_percent_per_gpu=per_gpu,
        overall_mape_percent=sum(per_gpu.values()) / len(per_gpu),
        configurations=sum(r.configurations for r in rows),
        mean_configurations=sum(r.configurations for r in rows) / n,
        mean_trace_length=sum(r.trace_length for r in rows) / n,
        mean_ms_per_run=sum(r.ms_per_run for r in rows) / n,
    )


def geometric_mean(values) -> float:
    values = list(values)
    if not values or any(v <= 0 for v in values):
        raise ConfigurationError(f"a geometric mean needs positive values, got {values}")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def table_v_speedups(times_ms=TABLE_V_MS) -> dict[str, float]:
    """GPGPU-Sim time / Wang et al.'s time per application."""
    return {app: gpgpusim / ours for app, (gpgpusim, ours) in times_ms.items()}


def mape_percent(predicted, measured) -> float:
    """W15: (100 / n) * sum |predicted - measured| / measured."""
    pairs = list(zip(predicted, measured, strict=True))
    if not pairs or any(m == 0 for _, m in pairs):
        raise ConfigurationError("MAPE needs at least one pair and no zero measurement")
    return 100.0 * sum(abs(p - m) / abs(m) for p, m in pairs) / len(pairs)
