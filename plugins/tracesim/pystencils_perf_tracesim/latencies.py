"""Per-level latencies in core cycles, per GPU architecture: one measured GPU each, kept apart from the device files.

Wang et al. (seeds/002, W13) profile hit and miss latencies per GPU but publish
none (SEED_MODELS.md 2(e)). The values below are pointer-chasing measurements
of the gpu-benches suite (github.com/te42kyfo/gpu-benches, commit 1c36d50,
``gpu-latency/<gpu>.txt``: one warp chases a random permutation, latency in
cycles of the clock it ran at): L1 from the 44-kB data set, L2 from the
2956-kB one (the near L2 partition on A100/H100), DRAM from the largest
(206 MB; 1.1 GB on the L40), beyond every L2 and with the TLB misses a large
grid sees too. An architecture without an entry is an error: pass your own
`MemoryLatencies` (``SimulationOptions(latencies=...)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pystencils_perf.errors import DeviceError

_GPU_BENCHES = "te42kyfo/gpu-benches@1c36d50 gpu-latency/"
#: "Latencies: DFMA: 8 cycles" (gpu-benches README, gpu-fma section, measured on a V100 PCIe)
_DFMA = "DFMA latency 8 cycles measured on V100 (gpu-benches README, FMA section)"
#: every NVIDIA SM since Maxwell has four processing blocks with one warp scheduler each
_SCHEDULERS = "4 SM processing blocks with one warp scheduler each (NVIDIA architecture whitepapers)"


@dataclass(frozen=True)
class MemoryLatencies:
    """Load-to-use latencies (core cycles) of a hit at each level, the FP latency, and the issue width."""

    l1_hit_cycles: float
    l2_hit_cycles: float
    dram_cycles: float
    arithmetic_cycles: float
    warp_schedulers_per_sm: int
    source: str


LATENCIES: dict[str, MemoryLatencies] = {
    "volta": MemoryLatencies(
        30.1, 215.0, 435.7, 8, 4, f"{_GPU_BENCHES}v100.txt (V100, 1380 MHz); {_DFMA}; {_SCHEDULERS}"
    ),
    "ampere": MemoryLatencies(
        36.1,
        211.1,
        571.2,
        8,
        4,
        f"{_GPU_BENCHES}a100_80.txt (A100 80GB, 1410 MHz); DFMA: V100's value, {_DFMA}; {_SCHEDULERS}",
    ),
    "hopper": MemoryLatencies(
        34.2,
        265.5,
        650.0,
        8,
        4,
        f"{_GPU_BENCHES}h100_pcie.txt (H100 PCIe at 1755 MHz, used for SXM5 and H200 too); "
        f"DFMA: V100's value, {_DFMA}; {_SCHEDULERS}",
    ),
    "ada": MemoryLatencies(
        36.2,
        276.5,
        631.9,
        8,
        4,
        f"{_GPU_BENCHES}l40.txt (L40, the L40S's AD102 die, 2490 MHz); DFMA: V100's value, {_DFMA}; {_SCHEDULERS}",
    ),
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
