"""AN5D's device table (Table 4 of the paper and the authors' spreadsheets), keyed by library names.

The numbers live in ``data/devices.toml``, each with its source. A name is looked up
in that table first (its keys and aliases), then resolved through the core device
library, so ``"V100"`` and ``"V100-PCIe-32GB"`` find the same entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from .errors import An5dDeviceError, An5dParameterError

DATA_FILE = Path(__file__).parent / "data" / "devices.toml"
PRECISIONS = ("float", "double")


@dataclass(frozen=True)
class An5dDevice:
    """What AN5D's model needs of a GPU; bandwidths are measured ones (BabelStream, gpumembench)."""

    name: str
    card: str
    aliases: tuple[str, ...]
    sm_count: int
    boost_clock_mhz: float
    fp32_lanes_per_sm: int
    table4_float_peak_gflops: float
    table4_double_peak_gflops: float
    dram_float_gbs: float
    dram_double_gbs: float
    shared_float_gbs: float
    shared_double_gbs: float
    max_threads_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    sources: dict[str, str]

    def peak_gflops(self, precision: str, *, from_clock: bool = True) -> float:
        """FP peak: the artifact's 2 * lanes * SMs * clock (double = half), or Table 4's rounded value."""
        if not from_clock:
            return getattr(self, f"table4_{precision}_peak_gflops")
        float_peak = 2 * self.fp32_lanes_per_sm * self.sm_count * self.boost_clock_mhz / 1000
        return float_peak if precision == "float" else float_peak / 2

    def dram_gbs(self, precision: str) -> float:
        return getattr(self, f"dram_{precision}_gbs")

    def shared_gbs(self, precision: str) -> float:
        return getattr(self, f"shared_{precision}_gbs")


_QUANTITIES = [f.name for f in fields(An5dDevice) if f.name not in ("name", "card", "aliases", "sources")]


def _entry(name: str, raw: dict) -> An5dDevice:
    values, sources = {}, {}
    for key in _QUANTITIES:
        item = raw.get(key)
        if not isinstance(item, dict) or not isinstance(item.get("value"), (int, float)) or item["value"] <= 0:
            raise An5dDeviceError(
                f"AN5D device table {DATA_FILE}: '{name}.{key}' must be {{value = positive number, source = ...}}"
            )
        if not str(item.get("source", "")).strip():
            raise An5dDeviceError(f"AN5D device table {DATA_FILE}: '{name}.{key}' has no source")
        values[key], sources[key] = item["value"], item["source"]
    return An5dDevice(
        name=name, card=raw.get("card", name), aliases=tuple(raw.get("aliases", ())), sources=sources, **values
    )


@cache
def an5d_devices() -> dict[str, An5dDevice]:
    """Every device of AN5D's table by library name."""
    with open(DATA_FILE, "rb") as fh:
        raw = tomllib.load(fh)
    return {name: _entry(name, entry) for name, entry in raw["devices"].items()}


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_an5d_device(name: str | An5dDevice) -> An5dDevice:
    """The AN5D device for a library name or alias; `An5dDeviceError` names the device if AN5D has no data for it."""
    if isinstance(name, An5dDevice):
        return name
    table = an5d_devices()
    key = _normalise(str(name))
    for dev in table.values():
        if key in {_normalise(n) for n in (dev.name, *dev.aliases)}:
            return dev
    import pystencils_perf

    try:
        library_name = pystencils_perf.get_device(name).name
    except pystencils_perf.DeviceError:
        library_name = None
    if library_name in table:
        return table[library_name]
    raise An5dDeviceError(
        f"no AN5D device data for {name!r}: AN5D's model needs measured DRAM and shared-memory bandwidths "
        f"per precision (paper Table 4); known: {', '.join(table)}"
    )


def check_precision(precision: str) -> str:
    """`precision` itself, or `An5dParameterError` if AN5D has no data for it."""
    if precision not in PRECISIONS:
        raise An5dParameterError(f"precision {precision!r}: AN5D models 'float' or 'double'")
    return precision
