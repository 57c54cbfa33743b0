"""A model's prediction (`Prediction`), and the limiters' times (Ernst et al., JPDC 2023, sec. II.A) that the
built-in models (`models.limiters`, `models.throughput`) start from: floating point, L1 (bank-conflict cycles), L2
bandwidth and DRAM bandwidth; on a GPU with a last-level cache behind L2 (AMD's Infinity Cache), that cache's
bandwidth is a fifth."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .vendors import vendor_of


@dataclass(frozen=True)
class Prediction:
    """A candidate's predicted throughput and the time of every term of the model.

    The performance model (a `perf_predict` plugin) returns one per candidate. For the
    limiter model the throughput is the inverse of the largest of the FP, L1, L2 and
    DRAM times; the ``throughput`` model combines its terms with a fitted partial
    overlap and adds a tail wave.

    Attributes
    ----------
    lups_per_second : float
        Predicted throughput in lattice updates per second.
    limiter : str
        The term with the largest time (``"FP"``, ``"L1"``, ``"L2"`` or ``"DRAM"`` for the
        limiter model; the throughput model names its own terms, e.g. ``"L1 tags"``).
    seconds_per_lup : dict of str to float
        Seconds per lattice update by term: the time each of the model's terms would
        need alone, not only the limiter's, so a dict, not one number
        (``{"FP": ..., "L1": ..., "L2": ..., "DRAM": ...}`` for the limiter model, and
        ``"LLC"`` on a GPU with a last-level cache; the throughput model's are ``"FP"``,
        ``"L1 banks"``, ``"L1 tags"``, ``"L2"``, ``"LLC"`` (with a last-level cache),
        ``"DRAM"``, ``"issue"``, ``"latency"``, ``"block starts"`` (where the device's
        block-start rate was measured), and the extra time ``"overlap"`` and ``"tail"``
        add; docs/model/index.md explains each).
    relative_error : float, default 0.0
        The model's measured error as a fraction (0.0783 for the limiter model, the fit's
        MAPE on its own rows for the throughput model): the candidates within it of the
        best are tied (`Ranking.tied`), and the ranking says so.
    """

    lups_per_second: float
    limiter: str
    seconds_per_lup: dict[str, float]
    relative_error: float = 0.0

    @property
    def glups(self) -> float:
        """Predicted throughput in GLup/s (10^9 lattice updates per second)."""
        return self.lups_per_second / 1e9


def limiter_times(model, device, metrics) -> dict[str, float]:
    """Seconds per lattice update that each limiter alone would need; with a last-level cache, its own limiter."""
    double = max((f.element_bytes for f in model.fields), default=8) >= 8
    peak_flops = (device.fp64_peak_gflops if double else device.fp32_peak_gflops) * 1e9
    below_l2 = metrics.dram_load_bytes_per_lup + metrics.dram_store_bytes_per_lup
    shared_wavefronts = metrics.shared_load_wavefronts_per_lup + metrics.shared_store_wavefronts_per_lup
    in_l1 = vendor_of(device).shared_memory_in_l1_data_path
    times = {
        "FP": metrics.flops_per_lup / peak_flops,
        # NVIDIA's shared memory passes the L1's data stage: its wavefronts and the L1's take turns
        "L1": (metrics.l1_cycles_per_lup + (shared_wavefronts if in_l1 else 0.0)) / device.l1_cycles_per_second,
        "L2": (metrics.l2_load_bytes_per_lup + metrics.l2_store_bytes_per_lup) / (device.l2_bandwidth_gbs * 1e9),
        "DRAM": below_l2 / (device.dram_bandwidth_gbs * 1e9),
    }
    if shared_wavefronts and not in_l1:
        times["LDS"] = shared_wavefronts / device.l1_cycles_per_second
    if device.last_level_cache_bytes:
        times["LLC"] = below_l2 / (device.last_level_cache_bandwidth_gbs * 1e9)
        times["DRAM"] = dram_bytes_behind_last_level_cache(model, device, metrics) / (device.dram_bandwidth_gbs * 1e9)
    return times


def dram_bytes_behind_last_level_cache(model, device, metrics) -> float:
    """DRAM bytes per update where a last-level cache (AMD's Infinity Cache) sits between L2 and DRAM.

    What misses L2 (the estimator's L2 <-> DRAM volumes) goes to the last-level cache instead. It is
    many waves large (128 MB on an RX 6900 XT against a wave's few MB), so it keeps what neighbouring
    waves share: DRAM sees each wave's new data once, the compulsory load, and the stores. Fields that
    fit in it together stay there between the repeated launches of a benchmark, and DRAM sees nothing.
    """
    field_bytes = sum(f.element_bytes * math.prod(f.shape) for f in model.fields)
    if field_bytes <= device.last_level_cache_bytes:
        return 0.0
    return metrics.dram_compulsory_load_bytes_per_lup + metrics.dram_store_bytes_per_lup
