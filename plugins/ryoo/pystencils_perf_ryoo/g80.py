"""The GeForce 8800 GTX (G80) of Ryoo et al. and its occupancy rule (R3 of SEED_MODELS.md, sec. 3).

Our devices get their resident blocks per SM from the core's occupancy; the G80
is kept apart because the paper's worked examples need its CUDA 1.0 rule, in
which registers are counted per thread without allocation granularity:
``B_SM = min(8, 768 // TPB, 8192 // (R * TPB), 16384 // smem)``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from pystencils_perf.errors import ConfigurationError, DeviceError

DATA_FILE = Path(__file__).parent / "data" / "geforce_8800_gtx.toml"


@dataclass(frozen=True)
class G80Device:
    """The numbers of Ryoo et al.'s Table 2 and sec. 2.1; `sources` names each one's origin."""

    name: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    shared_memory_per_sm_bytes: int
    max_threads_per_block: int
    warp_size: int
    sm_count: int
    clock_ghz: float
    flops_per_sm_per_cycle: int
    dram_bandwidth_gbs: float
    sources: dict

    @property
    def peak_gflops(self) -> float:
        """388.8 GFLOPS on the 8800 GTX (sec. 2.1)."""
        return self.sm_count * self.flops_per_sm_per_cycle * self.clock_ghz


@dataclass(frozen=True)
class G80Occupancy:
    blocks_per_sm: int
    limited_by: str


def load_g80(path: str | Path = DATA_FILE) -> G80Device:
    """The 8800 GTX from its data file; a missing value or source names the key."""
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    values, sources = {}, {}
    for f in fields(G80Device):
        if f.name in ("name", "sources"):
            continue
        entry = raw.get(f.name)
        if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source", "")).strip():
            raise DeviceError(f"device file {path}: '{f.name}' must be a table {{value = ..., source = \"...\"}}")
        values[f.name] = entry["value"]
        sources[f.name] = entry["source"]
    return G80Device(name=raw.get("name", Path(path).stem), sources=sources, **values)


def g80_occupancy(
    threads_per_block: int, registers_per_thread: int, shared_memory_bytes: int, device: G80Device | None = None
) -> G80Occupancy:
    """Resident blocks per SM by R3; a block the G80 cannot run at all is an error naming the limit."""
    device = device or load_g80()
    for name, value in (("threads per block", threads_per_block), ("registers per thread", registers_per_thread)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(shared_memory_bytes, bool) or not isinstance(shared_memory_bytes, int) or shared_memory_bytes < 0:
        raise ConfigurationError(
            f"shared memory per block must be a non-negative integer of bytes, got {shared_memory_bytes!r}"
        )
    if threads_per_block > device.max_threads_per_block:
        raise ConfigurationError(
            f"{threads_per_block} threads per block exceed the {device.name}'s {device.max_threads_per_block}"
        )
    limits = {
        "blocks": device.max_blocks_per_sm,
        "threads": device.max_threads_per_sm // threads_per_block,
        "registers": device.registers_per_sm // (registers_per_thread * threads_per_block),
    }
    if shared_memory_bytes:
        limits["shared memory"] = device.shared_memory_per_sm_bytes // shared_memory_bytes
    limited_by = min(limits, key=limits.get)
    if limits[limited_by] < 1:
        raise ConfigurationError(
            f"a block of {threads_per_block} threads x {registers_per_thread} registers and {shared_memory_bytes} B "
            f"shared memory does not fit on one {device.name} SM ({limited_by})"
        )
    return G80Occupancy(limits[limited_by], limited_by)
