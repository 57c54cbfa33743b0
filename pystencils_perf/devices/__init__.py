"""GPU descriptions: one TOML data file per GPU, every number with its source.

A device file holds tables ``key = {value = ..., source = "..."}`` (see
``data/v100-pcie-32gb.toml``) and fitted capacity-miss curves under
``[curves.NAME]``. Files are validated on load; a user may pass the path of
their own file wherever a device name is accepted.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import DeviceError

DATA_DIR = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Curve:
    """A Gompertz S-curve ``R(x) = a*exp(-b*exp(-c*(x - d)))``, or ``1 - R(x)`` if `complement`.

    The paper (seeds/000, sec. III.E) uses it as a smooth stand-in between "no
    misses" and "mostly misses"; its coefficients are fitted per GPU.
    """

    a: float
    b: float
    c: float
    d: float = 0.0
    complement: bool = False
    source: str = ""

    def __call__(self, x):
        import numpy as np

        with np.errstate(over="ignore"):  # exp(large) -> inf gives the curve's limit, which is meant
            r = self.a * np.exp(-self.b * np.exp(-self.c * (np.asarray(x, dtype=float) - self.d)))
        return 1.0 - r if self.complement else r


CURVE_NAMES = (
    "l1_load_capacity_miss",
    "l2_load_capacity_miss",
    "previous_wave_xy_hit",
    "previous_wave_z_hit",
    "l2_store_capacity_miss",
)


@dataclass(frozen=True)
class Device:
    """A GPU's architectural parameters (units in the names)."""

    name: str
    vendor: str
    architecture: str
    sm_count: int
    clock_ghz: float
    warp_size: int
    max_threads_per_block: int
    max_block_dim: tuple[int, int, int]
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    register_allocation_unit: int
    shared_memory_per_sm_bytes: int
    l1_capacity_bytes: int
    l1_line_bytes: int
    l1_sector_bytes: int
    l1_bank_count: int
    l1_bank_width_bytes: int
    l2_capacity_bytes: int
    l2_effective_capacity_bytes: int
    l2_sector_bytes: int
    dram_fetch_bytes: int
    dram_bandwidth_gbs: float
    l2_bandwidth_gbs: float
    fp64_peak_gflops: float
    fp32_peak_gflops: float
    curves: dict
    aliases: tuple[str, ...] = ()
    compute_capability: str = ""
    sources: dict | None = None
    path: str = ""

    def curve(self, name: str) -> Curve:
        return self.curves[name]


_META_KEYS = {"name", "vendor", "architecture", "aliases", "compute_capability", "curves"}
_QUANTITIES = [f for f in fields(Device) if f.name not in _META_KEYS | {"sources", "path"}]


def _check_number(path: Path, key: str, value, kind) -> None:
    items = value if isinstance(value, list) else [value]
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise DeviceError(f"device file {path}: '{key}' must be a positive number, got {value!r}")
        if kind is int and not float(v).is_integer():
            raise DeviceError(f"device file {path}: '{key}' must be an integer, got {value!r}")


def load_device_file(path: str | Path) -> Device:
    """Load and validate one device file; every problem names the file and the key."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise DeviceError(f"device file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise DeviceError(f"device file {path} is not valid TOML: {e}") from None

    for key in ("name", "vendor", "architecture"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise DeviceError(f"device file {path}: missing or empty string '{key}'")
    unknown = set(raw) - _META_KEYS - {f.name for f in _QUANTITIES}
    if unknown:
        raise DeviceError(f"device file {path}: unknown key(s) {', '.join(sorted(unknown))}")

    values, sources = {}, {}
    for f in _QUANTITIES:
        entry = raw.get(f.name)
        if entry is None:
            raise DeviceError(f"device file {path}: missing '{f.name}'")
        if not isinstance(entry, dict) or "value" not in entry:
            raise DeviceError(f"device file {path}: '{f.name}' must be a table {{value = ..., source = \"...\"}}")
        if not isinstance(entry.get("source"), str) or not entry["source"].strip():
            raise DeviceError(f"device file {path}: '{f.name}' has no source")
        kind = int if f.type in ("int", "tuple[int, int, int]") else float
        _check_number(path, f.name, entry["value"], kind)
        v = entry["value"]
        values[f.name] = tuple(int(x) for x in v) if isinstance(v, list) else kind(v)
        sources[f.name] = entry["source"]
    if not isinstance(values["max_block_dim"], tuple) or len(values["max_block_dim"]) != 3:
        raise DeviceError(f"device file {path}: 'max_block_dim' must be a list of three integers")

    curves = {}
    raw_curves = raw.get("curves", {})
    for name in CURVE_NAMES:
        c = raw_curves.get(name)
        if not isinstance(c, dict):
            raise DeviceError(f"device file {path}: missing curve [curves.{name}]")
        try:
            curve = Curve(
                a=float(c["a"]),
                b=float(c["b"]),
                c=float(c["c"]),
                d=float(c.get("d", 0.0)),
                complement=bool(c.get("complement", False)),
                source=str(c["source"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise DeviceError(f"device file {path}: curve [curves.{name}] needs numbers a, b, c and a source ({e})") from None
        curves[name] = curve
    extra_curves = set(raw_curves) - set(CURVE_NAMES)
    if extra_curves:
        raise DeviceError(f"device file {path}: unknown curve(s) {', '.join(sorted(extra_curves))}")

    return Device(
        name=raw["name"],
        vendor=raw["vendor"],
        architecture=raw["architecture"],
        aliases=tuple(raw.get("aliases", ())),
        compute_capability=str(raw.get("compute_capability", "")),
        curves=curves,
        sources=sources,
        path=str(path),
        **values,
    )


def list_devices() -> list[Device]:
    """Every device of the bundled library, sorted by name."""
    return sorted((load_device_file(p) for p in DATA_DIR.glob("*.toml")), key=lambda d: d.name)


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_device(name_or_path: str | Path | Device) -> Device:
    """A device by library name or alias (case and punctuation ignored), or from a file path."""
    if isinstance(name_or_path, Device):
        return name_or_path
    text = str(name_or_path)
    if text.endswith(".toml") or Path(text).is_file():
        return load_device_file(text)
    key = _normalise(text)
    devices = list_devices()
    for dev in devices:
        if key in {_normalise(n) for n in (dev.name, *dev.aliases)}:
            return dev
    known = ", ".join(d.name for d in devices)
    raise DeviceError(f"unknown device {text!r}; known devices: {known} (or pass the path of a device .toml file)")
