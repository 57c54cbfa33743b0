"""Memory traffic of spilled registers: where the compiler ran out of registers, a thread stores values to its
local memory and loads them back, and that traffic competes with the kernel's own.

ptxas reports per thread the bytes of its spill stores and loads (`ResourceUsage`); in fully unrolled
code (the convolution tiles of Kernel Tuner's caches) each runs once per thread, so per lattice update
they are those bytes over the points a thread updates. Local memory is interleaved per thread, so a
warp's spill access is one coalesced request of 4 B per lane, and it is cached like global data: where
the spilled values of the resident threads fit in L1 they stay there, where those of every SM fit in L2
they travel to L2, and else to DRAM (docs/model/index.md, step 3 of a ranking, has a measured case). The
spilled bytes a thread keeps are what the compiler reserves for them where it says (AMD's ScratchSize),
else its spill stores (each spilled register stored once).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpillTraffic:
    """Spill bytes per lattice update, and the levels they reach."""

    load_bytes_per_lup: float = 0.0
    store_bytes_per_lup: float = 0.0
    #: the level that holds the spilled values of all resident threads: "L1", "L2" or "DRAM"
    level: str = "L1"

    @property
    def bytes_per_lup(self) -> float:
        return self.load_bytes_per_lup + self.store_bytes_per_lup

    def reaching(self, level: str) -> tuple[float, float]:
        """(load, store) bytes per update that travel to `level` ("L2" or "DRAM"): all of them where the spilled
        values live there or beyond, else none."""
        order = ("L1", "L2", "DRAM")
        if order.index(self.level) >= order.index(level):
            return self.load_bytes_per_lup, self.store_bytes_per_lup
        return 0.0, 0.0


def spill_traffic(
    spill_store_bytes: int,
    spill_load_bytes: int,
    spill_kept_bytes: int,
    updates_per_thread: float,
    resident_threads_per_sm: int,
    device,
) -> SpillTraffic:
    """The spill traffic of a thread that spills `spill_store_bytes` / loads `spill_load_bytes` and keeps
    `spill_kept_bytes` spilled while it makes `updates_per_thread` lattice updates, with
    `resident_threads_per_sm` threads on each SM."""
    if not (spill_store_bytes or spill_load_bytes):
        return SpillTraffic()
    kept_per_sm = spill_kept_bytes * resident_threads_per_sm
    if kept_per_sm <= device.l1_capacity_bytes:
        level = "L1"
    elif kept_per_sm * device.sm_count <= device.l2_effective_capacity_bytes:
        level = "L2"
    else:
        level = "DRAM"
    updates = max(updates_per_thread, 1e-30)
    return SpillTraffic(spill_load_bytes / updates, spill_store_bytes / updates, level)
