"""The GPUs of Prajapati et al. (PPoPP'17): Tables 2 and 3, and C_iter per benchmark (Table 4).

C_iter is a micro-benchmarked constant per (stencil, GPU) (sec. 5.2); only the
paper's six benchmarks on its two GPUs have one. Other pairs must be calibrated
(P31) and passed explicitly.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from pystencils_perf.errors import DeviceError

DATA_FILE = Path(__file__).parent / "data" / "devices.toml"
#: Table 1: footprints are counted in 4-byte words
WORD_BYTES = 4


@dataclass(frozen=True)
class HhcDevice:
    name: str
    sm_count: int
    vector_units_per_sm: int
    shared_memory_per_sm_bytes: int
    shared_memory_per_block_bytes: int
    registers_per_sm: int
    shared_memory_banks: int
    max_blocks_per_sm: int
    #: L of Table 3: seconds per GB of global-memory traffic (GB = 1e9 B assumed; the paper does not say)
    global_seconds_per_gb: float
    #: tau_sync: one __syncthreads
    barrier_seconds: float
    #: T_sync: one kernel boundary (host-GPU synchronisation)
    kernel_sync_seconds: float
    #: Table 4, by benchmark name
    c_iter_seconds: dict
    sources: dict

    @property
    def seconds_per_word(self) -> float:
        return self.global_seconds_per_gb * WORD_BYTES / 1e9

    def c_iter(self, stencil_name: str) -> float:
        """C_iter of a benchmark of Table 4 on this GPU; anything else must be calibrated (P31)."""
        try:
            return self.c_iter_seconds[stencil_name]
        except KeyError:
            known = ", ".join(sorted(self.c_iter_seconds))
            raise DeviceError(
                f"no C_iter for stencil {stencil_name!r} on {self.name} (Table 4 has {known}); "
                "measure it as in P31 and pass c_iter_seconds"
            ) from None


_QUANTITIES = [f.name for f in fields(HhcDevice) if f.name not in ("name", "c_iter_seconds", "sources")]


def _parse(name: str, raw: dict, path: Path) -> HhcDevice:
    values, sources = {}, {}
    for key in _QUANTITIES:
        entry = raw.get(key)
        if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source", "")).strip():
            raise DeviceError(f"device file {path}: [{name}] '{key}' must be a table {{value = ..., source = \"...\"}}")
        if isinstance(entry["value"], bool) or not isinstance(entry["value"], (int, float)) or entry["value"] <= 0:
            raise DeviceError(f"device file {path}: [{name}] '{key}' must be a positive number, got {entry['value']!r}")
        values[key], sources[key] = entry["value"], entry["source"]
    c_iter = dict(raw.get("c_iter_seconds", {}))
    sources["c_iter_seconds"] = c_iter.pop("source", "")
    return HhcDevice(name=name, c_iter_seconds=c_iter, sources=sources, **values)


def hhc_devices(path: str | Path = DATA_FILE) -> dict[str, HhcDevice]:
    """Every GPU of the data file, by name."""
    path = Path(path)
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    return {name: _parse(name, table, path) for name, table in raw.items()}


def get_hhc_device(name: str) -> HhcDevice:
    """'GTX 980' or 'Titan X' (case and punctuation ignored)."""
    if isinstance(name, HhcDevice):
        return name
    devices = hhc_devices()
    key = "".join(ch for ch in str(name).lower() if ch.isalnum())
    for dev in devices.values():
        if key == "".join(ch for ch in dev.name.lower() if ch.isalnum()):
            return dev
    raise DeviceError(f"unknown HHC device {name!r}; known: {', '.join(devices)}")
