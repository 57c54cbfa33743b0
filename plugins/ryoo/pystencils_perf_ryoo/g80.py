"""The GeForce 8800 GTX (G80) of Ryoo et al.: its figures and occupancy rule (R3 of SEED_MODELS.md, sec. 3).

Our devices are the core's and get their resident blocks per SM from its occupancy. The G80 is none: the
device files describe L1 and L2 caches for global loads and compute capabilities it lacks. Its figures are
a table of the paper's numbers (Table 2 and sec. 2.1, each with its source in the data file), used by the
paper's worked examples and their CUDA 1.0 rule, in which registers are counted per thread without
allocation granularity: ``B_SM = min(8, 768 // TPB, 8192 // (R * TPB), 16384 // smem)``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pystencils_perf.errors import ConfigurationError, DeviceError

DATA_FILE = Path(__file__).parent / "data" / "geforce_8800_gtx.toml"


@dataclass(frozen=True)
class G80Occupancy:
    blocks_per_sm: int
    limited_by: str


@cache
def g80_parameters(path: str | Path = DATA_FILE) -> dict[str, float | str]:
    """The paper's G80 figures by name (and its ``name``), from the data file; a value without a source names the key."""
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    values = {"name": raw.get("name", Path(path).stem)}
    for key, entry in raw.items():
        if key == "name":
            continue
        if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source", "")).strip():
            raise DeviceError(f"device file {path}: '{key}' must be a table {{value = ..., source = \"...\"}}")
        values[key] = entry["value"]
    return values


def g80_peak_gflops() -> float:
    """388.8 GFLOPS on the 8800 GTX (sec. 2.1)."""
    g80 = g80_parameters()
    return g80["sm_count"] * g80["flops_per_sm_per_cycle"] * g80["clock_ghz"]


def g80_occupancy(threads_per_block: int, registers_per_thread: int, shared_memory_bytes: int) -> G80Occupancy:
    """Resident blocks per SM by R3; a block the G80 cannot run at all is an error naming the limit."""
    g80 = g80_parameters()
    for name, value in (("threads per block", threads_per_block), ("registers per thread", registers_per_thread)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(shared_memory_bytes, bool) or not isinstance(shared_memory_bytes, int) or shared_memory_bytes < 0:
        raise ConfigurationError(
            f"shared memory per block must be a non-negative integer of bytes, got {shared_memory_bytes!r}"
        )
    if threads_per_block > g80["max_threads_per_block"]:
        raise ConfigurationError(
            f"{threads_per_block} threads per block exceed the {g80['name']}'s {g80['max_threads_per_block']}"
        )
    limits = {
        "blocks": g80["max_blocks_per_sm"],
        "threads": g80["max_threads_per_sm"] // threads_per_block,
        "registers": g80["registers_per_sm"] // (registers_per_thread * threads_per_block),
    }
    if shared_memory_bytes:
        limits["shared memory"] = g80["shared_memory_per_sm_bytes"] // shared_memory_bytes
    limited_by = min(limits, key=limits.get)
    if limits[limited_by] < 1:
        raise ConfigurationError(
            f"a block of {threads_per_block} threads x {registers_per_thread} registers and {shared_memory_bytes} B "
            f"shared memory does not fit on one {g80['name']} SM ({limited_by})"
        )
    return G80Occupancy(limits[limited_by], limited_by)
