"""The HHC model's parameters of Prajapati et al.'s (PPoPP'17) GPUs: n_V, Table 3, and C_iter per benchmark (Table 4).

A GPU is the core's `pystencils_perf.devices.Device` (Table 2's SMs, shared memory, registers and blocks per SM);
``data/devices.toml`` adds the model's own parameters, keyed by device name. C_iter is a micro-benchmarked constant
per (stencil, GPU) (sec. 5.2); only the paper's six benchmarks on its two GPUs have one. Other pairs must be
calibrated (P31) and passed explicitly.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from pystencils_perf.devices import Device, get_device, load_device_file
from pystencils_perf.errors import DeviceError

DATA_FILE = Path(__file__).parent / "data" / "devices.toml"
#: Table 1: footprints are counted in 4-byte words
WORD_BYTES = 4


@dataclass(frozen=True)
class HhcParameters:
    """What the HHC model needs beyond the core `Device`, each with its source in `sources`."""

    device: Device
    aliases: tuple[str, ...]
    vector_units_per_sm: int
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


_QUANTITIES = [
    f.name for f in fields(HhcParameters) if f.name not in ("device", "aliases", "c_iter_seconds", "sources")
]


def _parse(name: str, raw: dict, path: Path) -> HhcParameters:
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
    device = load_device_file(path.parent / raw["device_file"]) if "device_file" in raw else get_device(name)
    return HhcParameters(
        device=device, aliases=tuple(raw.get("aliases", ())), c_iter_seconds=c_iter, sources=sources, **values
    )


@cache
def hhc_parameters(path: str | Path = DATA_FILE) -> dict[str, HhcParameters]:
    """Every GPU of the data file, by device name."""
    path = Path(path)
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    return {name: _parse(name, table, path) for name, table in raw.items()}


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_hhc_device(name: str | Device) -> Device:
    """'GTX 980' or 'Titan X' (the paper's names, or the devices' names and aliases; case and punctuation ignored)."""
    table = hhc_parameters()
    if isinstance(name, Device):
        name = name.name
    key = _normalise(name)
    for p in table.values():
        if key in {_normalise(n) for n in (p.device.name, *p.device.aliases, *p.aliases)}:
            return p.device
    raise DeviceError(f"unknown HHC device {name!r}; known: {', '.join(table)}")


def parameters_of(device: Device) -> HhcParameters:
    """The HHC parameters of a device `get_hhc_device` returned."""
    return hhc_parameters()[device.name]


def c_iter_of(device: Device, stencil_name: str) -> float:
    """C_iter of a benchmark of Table 4 on `device`; anything else must be calibrated (P31)."""
    table = parameters_of(device).c_iter_seconds
    try:
        return table[stencil_name]
    except KeyError:
        raise DeviceError(
            f"no C_iter for stencil {stencil_name!r} on {device.name} (Table 4 has {', '.join(sorted(table))}); "
            "measure it as in P31 and pass c_iter_seconds"
        ) from None
