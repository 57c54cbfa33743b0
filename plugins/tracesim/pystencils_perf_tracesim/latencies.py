"""Per-level latencies in core cycles, per GPU architecture (device data the core device files lack).

Wang et al. (HPCA'19, W13) profile hit and miss latencies per GPU but publish
none (SEED_MODELS.md 2(e)). The values below are published pointer-chasing
figures; each entry names its source. An architecture without an entry is an
error: pass your own `MemoryLatencies` (`simulate(..., options=SimulationOptions(latencies=...))`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pystencils_perf.errors import DeviceError

#: Table 3 of Ultrasonics Sonochemistry 99 (2023) 106546, doi:10.1016/j.ultsonch.2023.106546
#: (PMC10448217, "Hardware features of different Nvidia GPU architectures"): global memory 400, L2 200,
#: shared memory / L1 20, arithmetic 4 clock cycles for V100, A100 and H100 alike.
_UTSON_2023 = ("Ultrasonics Sonochemistry 99 (2023) 106546, Table 3 (PMC10448217): "
                "global memory 400, L2 200, shared memory 20, arithmetic 4 cycles")
#: every NVIDIA SM since Maxwell has four processing blocks, each with one warp scheduler issuing one instruction per cycle
_FOUR_SCHEDULERS = "NVIDIA Volta/Ampere/Hopper architecture whitepapers: 4 SM processing blocks, one warp scheduler each"


@dataclass(frozen=True)
class MemoryLatencies:
    """Load-to-use latencies (core cycles) of a hit at each level, the FP pipe latency, and the issue width."""

    l1_hit_cycles: float
    l2_hit_cycles: float
    dram_cycles: float
    arithmetic_cycles: float
    warp_schedulers_per_sm: int
    source: str


LATENCIES: dict[str, MemoryLatencies] = {
    "volta": MemoryLatencies(20, 200, 400, 4, 4, f"V100: {_UTSON_2023}; {_FOUR_SCHEDULERS}"),
    "ampere": MemoryLatencies(20, 200, 400, 4, 4, f"A100: {_UTSON_2023}; {_FOUR_SCHEDULERS}"),
    "hopper": MemoryLatencies(20, 200, 400, 4, 4, f"H100 (H200: same SM and L2 design): {_UTSON_2023}; {_FOUR_SCHEDULERS}"),
}


def latencies_for(device) -> MemoryLatencies:
    """The latency table entry of `device`'s architecture."""
    try:
        return LATENCIES[device.architecture]
    except KeyError:
        raise DeviceError(
            f"tracesim has no latency table for architecture {device.architecture!r} (device {device.name}); "
            f"known: {', '.join(sorted(LATENCIES))}; pass SimulationOptions(latencies=MemoryLatencies(...))"
        ) from None
