"""AN5D's parameters per GPU (Table 4 of the paper and the authors' spreadsheets), keyed by library names.

The GPU is the core's `pystencils_perf.devices.Device` (SMs, threads and registers per SM); this table adds
what AN5D's model was calibrated with and the device files do not hold: the artifact's boost clock and FP32
lanes, Table 4's peaks, and measured DRAM and shared-memory bandwidths per precision. The numbers live in
``data/devices.toml``, each with its source. A name is looked up among the table's aliases (the paper's
cards) first, then resolved through the core device library, so ``"V100"`` and ``"V100-PCIe-32GB"`` agree.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from pystencils_perf.devices import Device, get_device
from pystencils_perf.errors import DeviceError

from .errors import An5dDeviceError, An5dParameterError

DATA_FILE = Path(__file__).parent / "data" / "devices.toml"
PRECISIONS = ("float", "double")


@dataclass(frozen=True)
class An5dParameters:
    """What AN5D's model needs beyond the core `Device`; bandwidths are measured ones (BabelStream, gpumembench)."""

    card: str
    aliases: tuple[str, ...]
    boost_clock_mhz: float
    fp32_lanes_per_sm: int
    table4_float_peak_gflops: float
    table4_double_peak_gflops: float
    dram_float_gbs: float
    dram_double_gbs: float
    shared_float_gbs: float
    shared_double_gbs: float
    sources: dict[str, str]

    def peak_gflops(self, device: Device, precision: str, *, from_clock: bool = True) -> float:
        """FP peak: the artifact's 2 * lanes * SMs * clock (double = half), or Table 4's rounded value."""
        if not from_clock:
            return getattr(self, f"table4_{precision}_peak_gflops")
        float_peak = 2 * self.fp32_lanes_per_sm * device.sm_count * self.boost_clock_mhz / 1000
        return float_peak if precision == "float" else float_peak / 2

    def dram_gbs(self, precision: str) -> float:
        return getattr(self, f"dram_{precision}_gbs")

    def shared_gbs(self, precision: str) -> float:
        return getattr(self, f"shared_{precision}_gbs")


_QUANTITIES = [f.name for f in fields(An5dParameters) if f.name not in ("card", "aliases", "sources")]


def _entry(name: str, raw: dict) -> An5dParameters:
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
    return An5dParameters(card=raw.get("card", name), aliases=tuple(raw.get("aliases", ())), sources=sources, **values)


@cache
def an5d_parameters() -> dict[str, An5dParameters]:
    """AN5D's parameters by library device name."""
    with open(DATA_FILE, "rb") as fh:
        raw = tomllib.load(fh)
    return {name: _entry(name, entry) for name, entry in raw["devices"].items()}


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_an5d_device(name: str | Device) -> Device:
    """The library device for a name or alias; `An5dDeviceError` names the device if AN5D has no data for it."""
    table = an5d_parameters()
    if isinstance(name, Device):
        device, name = name, name.name
    else:
        key = _normalise(name)
        paper_card = next((lib for lib, p in table.items() if key in {_normalise(n) for n in (lib, *p.aliases)}), name)
        try:
            device = get_device(paper_card)
        except DeviceError:
            device = None
    if device is None or device.name not in table:
        raise An5dDeviceError(
            f"no AN5D device data for {name!r}: AN5D's model needs measured DRAM and shared-memory bandwidths "
            f"per precision (paper Table 4); known: {', '.join(table)}"
        )
    return device


def parameters_of(device: Device) -> An5dParameters:
    """AN5D's parameters of a device `get_an5d_device` returned."""
    return an5d_parameters()[device.name]


def check_precision(precision: str) -> str:
    """`precision` itself, or `An5dParameterError` if AN5D has no data for it."""
    if precision not in PRECISIONS:
        raise An5dParameterError(f"precision {precision!r}: AN5D models 'float' or 'double'")
    return precision
