"""GPU descriptions: one TOML data file per GPU, every number with its source and kind.

A device file (format version `FORMAT_VERSION`) holds one table per quantity, with its value, kind (`KINDS`)
and source (`load_device_file` shows one). A few quantities are optional (`OPTIONAL_QUANTITIES`: a cache behind
the L2, the L2's channel count); a file leaves them out where the GPU has no such part or no source gives it.
The capacity-miss curves are under ``[curves.NAME]``, each either ``fitted_on = "..."`` (with its residual) or
``borrowed_from = "OTHER GPU"``. Files are validated on load, including checks across fields, and parsed once
per process. A user may pass the path of their own file wherever a device name is accepted;
``pystencils-perf devices --template FILE`` writes one to fill in.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import DeviceError
from ..vendors import VENDORS

DATA_DIR = Path(__file__).parent / "data"
FORMAT_VERSION = 3
KINDS = ("measured", "datasheet", "derived", "estimate")


@dataclass(frozen=True)
class Curve:
    """A Gompertz S-curve ``R(x) = a*exp(-b*exp(-c*(x - d)))``, or ``1 - R(x)`` if `complement`.

    The paper (Ernst et al., JPDC 2023, sec. III.E) uses it as a smooth stand-in between "no
    misses" and "mostly misses"; its coefficients are fitted per GPU. `fitted_on`
    names the data it was fitted to, `borrowed_from` the GPU whose fit it reuses.
    """

    a: float
    b: float
    c: float
    d: float = 0.0
    complement: bool = False
    source: str = ""
    fitted_on: str = ""
    borrowed_from: str = ""
    rms_residual: float | None = None

    def __call__(self, x):
        import numpy as np

        with np.errstate(over="ignore"):  # exp(large) -> inf gives the curve's limit, which is meant
            r = self.a * np.exp(-self.b * np.exp(-self.c * (np.asarray(x, dtype=float) - self.d)))
        return 1.0 - r if self.complement else r

    @property
    def status(self) -> str:
        """One line: what the curve was fitted on, or which GPU it is borrowed from."""
        if self.borrowed_from:
            return f"borrowed from {self.borrowed_from}"
        residual = f", RMS residual {self.rms_residual:g}" if self.rms_residual is not None else ""
        return f"fitted on {self.fitted_on}{residual}"


CURVE_NAMES = (
    "l1_load_capacity_miss",
    "l2_load_capacity_miss",
    "previous_wave_xy_hit",
    "previous_wave_z_hit",
    "l2_store_capacity_miss",
)
#: curves a file may leave out: without ``older_wave_hit`` a wave finds what an older wave loaded while the waves
#: back to it fit in the L2 it leaves, a step (`estimate.volumes.older_wave_hits`)
OPTIONAL_CURVE_NAMES = ("older_wave_hit",)


@dataclass(frozen=True)
class Device:
    """A GPU's architectural parameters, read from a device file (units in the names).

    Get one with `get_device` (library name, alias or file path); `list_devices` gives
    the bundled library. Every number of the file has a source and a kind
    (``measured``, ``datasheet``, ``derived`` or ``estimate``).

    Two L2 capacities: `l2_dram_capacity_bytes` is the data volume the L2 holds
    without DRAM traffic (a share of the L2, gpu-benches gpu-l2-cache; docs/devices.md);
    `l2_bandwidth_capacity_bytes` the volume read by all SMs that keeps the full L2
    bandwidth (one partition on A100/H100, gpu-benches gpu-cache).
    `l2_effective_capacity_bytes` is the capacity the estimator's DRAM volumes use; it
    equals `l2_dram_capacity_bytes` (the fitted L2 curves are over that oversubscription).

    Attributes
    ----------
    name, vendor, architecture : str
        The GPU's name (``"V100-PCIe-32GB"``), vendor and architecture.
    sm_count : int
        Streaming multiprocessors (CUs on CDNA; WGPs of 2 CUs on RDNA, where a workgroup runs over both).
    clock_ghz : float
        SM clock under load, GHz.
    warp_size : int
        Threads per warp (wavefront).
    max_threads_per_block : int
        Threads per block, at most.
    max_block_dim : (int, int, int)
        Largest block extent in x, y, z.
    max_threads_per_sm, max_blocks_per_sm : int
        Resident threads and blocks per SM, at most.
    registers_per_sm : int
        32-bit registers per SM.
    max_registers_per_thread : int
        Registers one thread may use.
    register_allocation_unit : int
        Registers are allocated per warp in units of this.
    shared_memory_per_sm_bytes : int
        Shared memory per SM, bytes: what the resident blocks share.
    shared_memory_per_block_bytes : int
        Shared memory one block may allocate, bytes (CUDA's opt-in maximum; 64 KiB of an RDNA
        WGP's 128 KiB). Optional, default `shared_memory_per_sm_bytes`.
    shared_memory_reserved_per_block_bytes : int
        Shared memory the runtime reserves for each resident block beyond its own (1 KiB from
        compute capability 8.0). Optional, default 0.
    l1_capacity_bytes : int
        L1 data cache per SM that serves global loads, bytes.
    l1_line_bytes, l1_sector_bytes : int
        L1 allocation line and transfer sector, bytes.
    l1_bank_count, l1_bank_width_bytes : int
        L1 banks served per cycle, and bytes per bank.
    l1_caches_per_sm : int
        L1 caches that serve one SM's warps side by side, each with those banks (1; 2 on RDNA,
        whose SM equivalent is a WGP of 2 CUs with an L0 cache each). Optional, default 1.
    l1_requests_per_cycle : float
        Warp load requests one L1 cache accepts per cycle, at most, however few lines each touches
        (1; 0.5 on GA10x, where gpu-strides takes two cycles for a warp's float load of one line,
        where other GPUs take one: docs/model/index.md, ``L1 tags``). Optional, default 1.
    global_loads_cached_in_l1 : int
        1 where the L1 caches a kernel's global loads; 0 where it caches only those that take the
        read-only path (`__ldg`, or arrays the compiler knows to be read-only, such as pystencils'
        ``const`` restrict fields) and the others go to L2 (Maxwell; Pascal GP10x: compute
        capability 5.x and 6.1). Optional, default 1.
    l2_capacity_bytes : int
        Nominal L2 capacity, bytes.
    l2_partition_count : int
        Partitions the L2 is split into, each caching the data its own SMs access (2 on GA100 and
        GH100; 1, one unified L2, elsewhere). Optional, default 1.
    l2_effective_capacity_bytes : int
        The L2 capacity the estimator's DRAM volumes use (`l2_dram_capacity_bytes`).
    l2_sector_bytes : int
        L2 sector, bytes.
    dram_fetch_bytes : int
        DRAM access granularity, bytes.
    dram_bandwidth_gbs : float
        DRAM bandwidth for one load and one store stream (STREAM scale), GB/s.
    l2_bandwidth_gbs : float
        L2 bandwidth, GB/s.
    fp64_peak_gflops, fp32_peak_gflops : float
        FP64 and FP32 peak (non-tensor), GFLOP/s.
    warp_instructions_per_cycle_per_sm : int
        Warp (wavefront) instructions an SM (CU) issues per cycle: its warp schedulers.
    l1_hit_latency_cycles, l2_hit_latency_cycles, dram_latency_cycles : float
        Load-to-use latency of a hit in L1, in L2, and of a DRAM access, core cycles
        (pointer chase; the latency term of the throughput model).
    curves : dict of str to Curve
        The capacity-miss curves by name (`CURVE_NAMES`, and `OPTIONAL_CURVE_NAMES` where given), each
        fitted on named data or borrowed from another GPU.
    aliases : tuple of str
        Other names `get_device` accepts (``"V100"``).
    compute_capability : str
        CUDA compute capability (``"7.0"``), the architecture registers are compiled for.
    sources, kinds, notes : dict of str to str
        Per quantity: its source, its kind, and the note an estimate carries.
    path : str
        The device file.
    l2_dram_capacity_bytes : int
        The data volume the L2 holds without DRAM traffic, bytes.
    l2_bandwidth_capacity_bytes : int
        The data volume read by all SMs that keeps the full L2 bandwidth, bytes.
    format_version : int
        The device-file format (`FORMAT_VERSION`).
    last_level_cache_bytes : int
        A cache behind the L2 that L2 misses go to before DRAM (AMD Infinity Cache /
        MALL on RDNA2/3 and MI300), bytes; 0 if the GPU has none. Optional in the file.
    last_level_cache_bandwidth_gbs : float
        That cache's bandwidth, GB/s; 0 if none. Optional, given with `last_level_cache_bytes`.
    l2_channel_count : int
        Independent L2 channels that addresses are interleaved over (the L2's parallelism,
        which the per-channel L2 term needs); 0 where no source gives it. Optional.

    See Also
    --------
    get_device, list_devices
    """

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
    warp_instructions_per_cycle_per_sm: int
    l1_hit_latency_cycles: float
    l2_hit_latency_cycles: float
    dram_latency_cycles: float
    curves: dict
    aliases: tuple[str, ...] = ()
    compute_capability: str = ""
    sources: dict | None = None
    path: str = ""
    l2_dram_capacity_bytes: int = 0
    l2_bandwidth_capacity_bytes: int = 0
    format_version: int = FORMAT_VERSION
    kinds: dict | None = None
    notes: dict | None = None
    last_level_cache_bytes: int = 0
    last_level_cache_bandwidth_gbs: float = 0.0
    l2_channel_count: int = 0
    l1_caches_per_sm: int = 1
    l1_requests_per_cycle: float = 1.0
    global_loads_cached_in_l1: int = 1
    shared_memory_per_block_bytes: int = 0
    shared_memory_reserved_per_block_bytes: int = 0
    l2_partition_count: int = 1

    def curve(self, name: str) -> Curve:
        return self.curves[name]

    def registers_per_warp(self, registers_per_thread: int) -> int:
        """Registers a warp of threads needing `registers_per_thread` is allocated: whole units of
        `register_allocation_unit` (as NVIDIA's occupancy calculator and the AMD backend allocate them)."""
        unit = self.register_allocation_unit
        return -(-registers_per_thread * self.warp_size // unit) * unit

    @property
    def register_file_partitions(self) -> int:
        """Register files an SM's registers are split into, one per scheduler: a block's warps are spread over them
        and each warp's registers come from its own. NVIDIA: 4 sub-partitions (2 on GP100, compute capability 6.0),
        the count CUDA's occupancy header uses (cuda_occupancy.h of CUDA 13.0, cudaOccSubPartitionsPerMultiprocessor).
        AMD files give a CU's (a WGP's) registers as one file, whose waves the compiler fits at build time."""
        if self.vendor != "nvidia":
            return 1
        return 2 if self.compute_capability == "6.0" else 4

    def blocks_by_registers(self, registers_per_thread: int, threads_per_block: int) -> int:
        """Blocks of `threads_per_block` whose registers fit an SM's register files at once (0: the block
        cannot run). As cuda_occupancy.h computes it: a launch is refused where the warps, rounded up to whole
        partitions (`register_file_partitions`), need more registers than the SM has, even where they would fit
        without the rounding (docs/model/index.md, "Occupancy and waves"); resident warps are those each
        partition's share of the registers holds."""
        warps = -(-threads_per_block // self.warp_size)
        per_warp = self.registers_per_warp(registers_per_thread)
        partitions = self.register_file_partitions
        if per_warp * -(-warps // partitions) * partitions > self.registers_per_sm:
            return 0
        return (self.registers_per_sm // partitions) // per_warp * partitions // warps

    @property
    def shared_memory_limit_per_block_bytes(self) -> int:
        """Shared memory one block may allocate: the per-block limit where the file gives one, else what the SM
        holds beside the runtime's reservation for that block."""
        return (
            self.shared_memory_per_block_bytes
            or self.shared_memory_per_sm_bytes - self.shared_memory_reserved_per_block_bytes
        )

    def blocks_by_shared_memory(self, shared_bytes_per_block: int) -> int:
        """Blocks allocating `shared_bytes_per_block` each whose shared memory, with what the runtime reserves
        per block, fits an SM at once."""
        return self.shared_memory_per_sm_bytes // (shared_bytes_per_block + self.shared_memory_reserved_per_block_bytes)

    @property
    def unified_l2(self) -> bool:
        """Whether the L2 is one cache for all SMs, not split into partitions (`l2_partition_count`)."""
        return self.l2_partition_count == 1

    @property
    def l1_cycles_per_second(self) -> float:
        """Cycles of L1 pipelines per second over the whole GPU: every SM's L1 caches side by side."""
        return self.sm_count * self.l1_caches_per_sm * self.clock_ghz * 1e9

    def count_by_kind(self) -> dict[str, int]:
        """How many of the file's numbers are measured, datasheet, derived, estimate."""
        counts = dict.fromkeys(KINDS, 0)
        for kind in (self.kinds or {}).values():
            counts[kind] += 1
        return counts


_META_KEYS = {"format_version", "name", "vendor", "architecture", "aliases", "compute_capability", "curves"}
#: Device fields not read from a quantity table of the file
_NOT_IN_FILE = {"sources", "path", "kinds", "notes", "l2_effective_capacity_bytes"}
_QUANTITIES = [f for f in fields(Device) if f.name not in _META_KEYS | _NOT_IN_FILE]
_INTEGER_TYPES = ("int", "tuple[int, int, int]")
#: quantities format version 3 added (the throughput model's issue rate and latencies)
#: quantities a file may leave out (the GPU has no such part, or no source gives it): absent means 0, one
#: L1 cache per SM, and one L1 request per cycle
OPTIONAL_QUANTITIES = (
    "last_level_cache_bytes",
    "last_level_cache_bandwidth_gbs",
    "l2_channel_count",
    "l1_caches_per_sm",
    "l1_requests_per_cycle",
    "shared_memory_per_block_bytes",
    "shared_memory_reserved_per_block_bytes",
    "l2_partition_count",
    "global_loads_cached_in_l1",
)
#: quantities that say yes (1) or no (0) instead of counting something
FLAG_QUANTITIES = ("global_loads_cached_in_l1",)
LATENCY_QUANTITIES = (
    "warp_instructions_per_cycle_per_sm",
    "l1_hit_latency_cycles",
    "l2_hit_latency_cycles",
    "dram_latency_cycles",
)
_ENTRY_KEYS = {"value", "kind", "source", "note"}
_CURVE_KEYS = {
    "a",
    "b",
    "c",
    "d",
    "complement",
    "source",
    "fitted_on",
    "borrowed_from",
    "rms_residual",
    "max_residual",
    "points",
    "calibration",
}


def _fail(path: Path, message: str):
    raise DeviceError(f"device file {path}: {message}")


def _check_number(path: Path, key: str, value, kind) -> None:
    items = value if isinstance(value, list) else [value]
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            _fail(path, f"'{key}' must be a positive number, got {value!r}")
        if kind is int and not float(v).is_integer():
            _fail(path, f"'{key}' must be an integer, got {value!r}")


def _check_version(path: Path, raw: dict) -> None:
    version = raw.get("format_version")
    if version == FORMAT_VERSION:
        return
    if version is None or (isinstance(version, int) and version < FORMAT_VERSION):
        added = (
            f"add 'format_version = {FORMAT_VERSION}' and the latencies and issue rate of the default model "
            f"({', '.join(LATENCY_QUANTITIES)})"
        )
        if version is None or version < 2:
            added += (
                ", a 'kind' to every number, 'l2_dram_capacity_bytes' and 'l2_bandwidth_capacity_bytes' instead "
                "of 'l2_effective_capacity_bytes', and 'fitted_on' or 'borrowed_from' to every curve"
            )
        _fail(
            path,
            f"format version {version or 1} is older than the version {FORMAT_VERSION} this pystencils-perf reads: "
            f"{added} (`pystencils-perf devices --template FILE` shows every key)",
        )
    _fail(
        path,
        f"format_version {version!r} is not {FORMAT_VERSION}, the version this pystencils-perf reads: "
        f"use a newer pystencils-perf or a file of version {FORMAT_VERSION}",
    )


def _quantity(path: Path, name: str, type_name: str, entry):
    """(value, kind, source, note) of one quantity table."""
    if not isinstance(entry, dict) or "value" not in entry:
        _fail(path, f'\'{name}\' must be a table {{value = ..., kind = "...", source = "..."}}')
    unknown = set(entry) - _ENTRY_KEYS
    if unknown:
        _fail(path, f"'{name}' has unknown key(s) {', '.join(sorted(unknown))}")
    if not isinstance(entry.get("source"), str) or not entry["source"].strip():
        _fail(path, f"'{name}' has no source")
    kind = entry.get("kind")
    if kind not in KINDS:
        _fail(path, f"'{name}' needs kind = one of {', '.join(KINDS)}, got {kind!r}")
    note = entry.get("note", "")
    if kind == "estimate" and (not isinstance(note, str) or not note.strip()):
        _fail(path, f"'{name}' is an estimate without a note saying what it rests on")
    number_type = int if type_name in _INTEGER_TYPES else float
    if name in FLAG_QUANTITIES:
        if isinstance(entry["value"], bool) or entry["value"] not in (0, 1):
            _fail(path, f"'{name}' must be 0 or 1, got {entry['value']!r}")
        return int(entry["value"]), kind, entry["source"], note
    _check_number(path, name, entry["value"], number_type)
    v = entry["value"]
    value = tuple(int(x) for x in v) if isinstance(v, list) else number_type(v)
    return value, kind, entry["source"], note


def _curve(path: Path, name: str, c) -> Curve:
    if not isinstance(c, dict):
        _fail(path, f"missing curve [curves.{name}]")
    unknown = set(c) - _CURVE_KEYS
    if unknown:
        _fail(path, f"curve [curves.{name}] has unknown key(s) {', '.join(sorted(unknown))}")
    fitted_on = c.get("fitted_on") or (
        f"{c['calibration'].get('data', 'measured volumes')} (pystencils-perf calibrate)"
        if isinstance(c.get("calibration"), dict)
        else ""
    )
    borrowed_from = c.get("borrowed_from", "")
    if bool(fitted_on) == bool(borrowed_from):
        _fail(
            path,
            f'curve [curves.{name}] needs exactly one of fitted_on = "data it was fitted to" '
            f'or borrowed_from = "GPU whose fit it reuses"',
        )
    residual = c.get("rms_residual", (c.get("calibration") or {}).get("rms_relative_error_after"))
    try:
        return Curve(
            a=float(c["a"]),
            b=float(c["b"]),
            c=float(c["c"]),
            d=float(c.get("d", 0.0)),
            complement=bool(c.get("complement", False)),
            source=str(c["source"]),
            fitted_on=str(fitted_on),
            borrowed_from=str(borrowed_from),
            rms_residual=None if residual is None else float(residual),
        )
    except (KeyError, TypeError, ValueError) as e:
        _fail(path, f"curve [curves.{name}] needs numbers a, b, c and a source ({e})")


#: plausible ranges of the quantities a misplaced digit or unit puts far off: (low, high), both included
PLAUSIBLE_RANGES = {
    "clock_ghz": (0.1, 5.0),
    "sm_count": (1, 1024),
    "warp_size": (32, 64),
    "l1_capacity_bytes": (1024, 4 << 20),
    "l2_capacity_bytes": (64 << 10, 1 << 30),
    "dram_bandwidth_gbs": (10.0, 100_000.0),
    "l2_bandwidth_gbs": (10.0, 1_000_000.0),
}


def _check_known_values(path: Path, raw: dict, v: dict) -> None:
    """A known vendor and architecture, and quantities within `PLAUSIBLE_RANGES`."""
    if raw["vendor"] not in VENDORS:
        _fail(path, f"unknown vendor {raw['vendor']!r}; known: {', '.join(VENDORS)}")
    if raw["architecture"] not in VENDORS[raw["vendor"]].architectures:
        _fail(
            path,
            f"unknown {raw['vendor']} architecture {raw['architecture']!r}; known: "
            f"{', '.join(VENDORS[raw['vendor']].architectures)}",
        )
    vendor = VENDORS[raw["vendor"]]
    if not raw.get("compute_capability"):  # else registers are compiled for the compiler's default architecture
        _fail(path, f"missing or empty 'compute_capability': an {vendor.name} GPU needs {vendor.compute_capability}")
    for name, (low, high) in PLAUSIBLE_RANGES.items():
        if name in v and not low <= v[name] <= high:
            _fail(path, f"'{name}' = {v[name]!r} is outside the plausible range {low:g} to {high:g}")


def _check_across_fields(path: Path, v: dict) -> None:
    """Relations between numbers that a typo or a misread datasheet breaks."""
    checks = [
        (v["l2_dram_capacity_bytes"] <= v["l2_capacity_bytes"], "l2_dram_capacity_bytes exceeds l2_capacity_bytes"),
        (
            v["l2_bandwidth_capacity_bytes"] <= v["l2_capacity_bytes"],
            "l2_bandwidth_capacity_bytes exceeds l2_capacity_bytes",
        ),
        (v["l1_line_bytes"] % v["l1_sector_bytes"] == 0, "l1_line_bytes is not a multiple of l1_sector_bytes"),
        (v["dram_fetch_bytes"] % v["l2_sector_bytes"] == 0, "dram_fetch_bytes is not a multiple of l2_sector_bytes"),
        (v["max_threads_per_block"] <= v["max_threads_per_sm"], "max_threads_per_block exceeds max_threads_per_sm"),
        (max(v["max_block_dim"]) <= v["max_threads_per_block"], "a max_block_dim entry exceeds max_threads_per_block"),
        (v["max_threads_per_block"] % v["warp_size"] == 0, "max_threads_per_block is not a multiple of warp_size"),
        (
            v["max_registers_per_thread"] * v["warp_size"] <= v["registers_per_sm"],
            "max_registers_per_thread x warp_size exceeds registers_per_sm",
        ),
        (v["l2_bandwidth_gbs"] > v["dram_bandwidth_gbs"], "l2_bandwidth_gbs is not above dram_bandwidth_gbs"),
        (v["fp64_peak_gflops"] <= v["fp32_peak_gflops"], "fp64_peak_gflops exceeds fp32_peak_gflops"),
        (
            v["l1_hit_latency_cycles"] < v["l2_hit_latency_cycles"] < v["dram_latency_cycles"],
            "latencies must grow from l1_hit_latency_cycles to l2_hit_latency_cycles to dram_latency_cycles",
        ),
        (
            v.get("shared_memory_per_block_bytes", 0) + v.get("shared_memory_reserved_per_block_bytes", 0)
            <= v["shared_memory_per_sm_bytes"],
            "shared_memory_per_block_bytes and shared_memory_reserved_per_block_bytes exceed shared_memory_per_sm_bytes",
        ),
        (
            bool(v.get("last_level_cache_bytes")) == bool(v.get("last_level_cache_bandwidth_gbs")),
            "last_level_cache_bytes and last_level_cache_bandwidth_gbs go together",
        ),
    ]
    if v.get("last_level_cache_bytes") and v.get("last_level_cache_bandwidth_gbs"):
        checks += [
            (
                v["last_level_cache_bytes"] > v["l2_capacity_bytes"],
                "last_level_cache_bytes is not above l2_capacity_bytes",
            ),
            (
                v["dram_bandwidth_gbs"] < v["last_level_cache_bandwidth_gbs"],
                "last_level_cache_bandwidth_gbs is not above dram_bandwidth_gbs",
            ),
        ]
    for ok, message in checks:
        if not ok:
            _fail(path, message)


def _parse(path: Path) -> Device:
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise DeviceError(f"device file {path} does not exist") from None
    except IsADirectoryError:
        raise DeviceError(f"{path} is a folder, not a device file") from None
    except OSError as e:
        raise DeviceError(f"cannot read device file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise DeviceError(f"device file {path} is not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise DeviceError(f"device file {path} is not UTF-8 text (byte {e.start}: {e.reason})") from None

    _check_version(path, raw)
    for key in ("name", "vendor", "architecture"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            _fail(path, f"missing or empty string '{key}'")
    unknown = set(raw) - _META_KEYS - {f.name for f in _QUANTITIES}
    if unknown:
        _fail(path, f"unknown key(s) {', '.join(sorted(unknown))}")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        _fail(path, f"'aliases' must be a list of names such as [\"V100\"], got {aliases!r}")
    capability = raw.get("compute_capability", "")
    if not isinstance(capability, str) or (
        raw["vendor"] == "nvidia" and capability and not re.fullmatch(r"\d+\.\d", capability)
    ):
        _fail(path, f"'compute_capability' must be a string such as \"8.0\" (NVIDIA's major.minor), got {capability!r}")
    if not isinstance(raw.get("curves", {}), dict):
        _fail(path, "'curves' must be tables [curves.NAME]")

    values, sources, kinds, notes = {}, {}, {}, {}
    for f in _QUANTITIES:
        if f.name not in raw and f.name in OPTIONAL_QUANTITIES:
            continue
        if f.name not in raw:
            _fail(path, f"missing '{f.name}'")
        values[f.name], kinds[f.name], sources[f.name], note = _quantity(path, f.name, f.type, raw[f.name])
        if note:
            notes[f.name] = note
    if not isinstance(values["max_block_dim"], tuple) or len(values["max_block_dim"]) != 3:
        _fail(path, "'max_block_dim' must be a list of three integers")
    _check_known_values(path, raw, values)
    _check_across_fields(path, values)

    raw_curves = raw.get("curves", {})
    curves = {name: _curve(path, name, raw_curves.get(name)) for name in CURVE_NAMES}
    curves.update({name: _curve(path, name, raw_curves[name]) for name in OPTIONAL_CURVE_NAMES if name in raw_curves})
    extra_curves = set(raw_curves) - set(CURVE_NAMES) - set(OPTIONAL_CURVE_NAMES)
    if extra_curves:
        _fail(path, f"unknown curve(s) {', '.join(sorted(extra_curves))}")

    return Device(
        name=raw["name"],
        vendor=raw["vendor"],
        architecture=raw["architecture"],
        aliases=tuple(aliases),
        compute_capability=capability,
        curves=curves,
        sources=sources,
        kinds=kinds,
        notes=notes,
        path=str(path),
        l2_effective_capacity_bytes=values["l2_dram_capacity_bytes"],
        **values,
    )


@functools.cache
def _parse_cached(resolved: Path, mtime_ns: int) -> Device:
    return _parse(resolved)


def load_device_file(path: str | Path) -> Device:
    """Load and validate one device file (once per process and file version); every problem names the file and the key.

    A file starts with ``format_version = 3`` and holds one table per quantity::

        [dram_bandwidth_gbs]
        value = 1704.0
        kind = "measured"            # measured | datasheet | derived | estimate
        source = "te42kyfo/gpu-benches gpu-stream/h100_pcie.txt @1c36d50..., scale kernel"
        note = "..."                 # required for an estimate: one short line saying what it rests on

    The checks across fields include that an L2 capacity that serves reuse cannot exceed the L2.
    """
    path = Path(path)
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise DeviceError(f"device file {path} does not exist") from None
    return _parse_cached(resolved, resolved.stat().st_mtime_ns)


def library_files() -> list[Path]:
    """The bundled device files."""
    return sorted(DATA_DIR.glob("*.toml"))


def list_devices() -> list[Device]:
    """Every device of the bundled library, sorted by name."""
    return sorted((load_device_file(p) for p in library_files()), key=lambda d: d.name)


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def alias_index() -> dict[str, Device]:
    """Normalised name or alias -> library device; an alias that two devices claim is an error."""
    index: dict[str, Device] = {}
    for dev in list_devices():
        for key in {_normalise(n) for n in (dev.name, *dev.aliases)}:
            other = index.setdefault(key, dev)
            if other is not dev:
                raise DeviceError(
                    f"device library: {key!r} names both {other.name} ({Path(other.path).name}) "
                    f"and {dev.name} ({Path(dev.path).name})"
                )
    return index


@functools.cache
def _library_paths(stamps: tuple[tuple[Path, int], ...]) -> dict[str, Path]:
    """Normalised name or alias -> bundled device file (`stamps`: each file with its modification time), read from
    the files' top-level keys alone, which TOML puts before the first table: finding one device parses one file.
    Any problem (a malformed header, an alias two files claim) is left to `alias_index`, whose error names it."""
    index: dict[str, Path] = {}
    for path, _ in stamps:
        header = tomllib.loads(path.read_text().split("\n[", 1)[0])
        for key in {_normalise(n) for n in (header["name"], *header.get("aliases", []))}:
            if index.setdefault(key, path) != path:
                raise DeviceError(f"device library: {key!r} names two devices")
    return index


def _library_path(name: str) -> Path | None:
    """The bundled device file that `name` names (`_library_paths`), or None."""
    try:
        paths = _library_paths(tuple((f, f.stat().st_mtime_ns) for f in library_files()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, DeviceError):
        dev = alias_index().get(_normalise(name))  # every file parsed: a problem is raised with its file and key
        return Path(dev.path) if dev else None
    return paths.get(_normalise(name))


def get_device(name_or_path: str | Path | Device) -> Device:
    """A device by library name or alias (case and punctuation ignored), or from a file path."""
    if isinstance(name_or_path, Device):
        return name_or_path
    text = str(name_or_path)
    if not text.strip():  # Path("") is the current folder: the folder check below would blame it
        raise DeviceError(
            "the device name is empty: give a library name or alias (`pystencils-perf devices` lists "
            "them) or a device .toml file"
        )
    if text.endswith(".toml") or Path(text).is_file():
        return load_device_file(text)
    path = _library_path(text)
    dev = load_device_file(path) if path else None
    if dev is None and Path(text).is_dir():
        raise DeviceError(f"device {text!r} is a folder, not a device name or .toml file")
    if dev is None:
        raise DeviceError(
            f"unknown device {text!r}{_did_you_mean(text)}; known devices: {_known_devices()} "
            "(or the path of a device .toml file)"
        )
    return dev


def _short_alias(dev: Device) -> str:
    """The shortest alias shorter than `dev`'s name (V100 for V100-PCIe-32GB), or ""."""
    shorter = [a for a in dev.aliases if len(a) < len(dev.name)]
    return min(shorter, key=len) if shorter else ""


def _known_devices() -> str:
    """Every library device with its shortest other alias: ``V100-PCIe-32GB (V100), ...``."""
    return ", ".join(f"{d.name} ({_short_alias(d)})" if _short_alias(d) else d.name for d in list_devices())


def _edits(a: str, b: str) -> int:
    """Characters inserted, deleted or replaced between `a` and `b` (along difflib's alignment)."""
    return sum(
        max(i2 - i1, j2 - j1)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes()
        if tag != "equal"
    )


def _could_be_a_typo(typed: str, spelling: str) -> bool:
    """Whether `typed` (normalised) may be `spelling` misspelt: its digits, where it has any, begin the
    spelling's (another model number is another card: RTX 4090 is not an RTX 3090), and it is a part of the
    spelling or two edits from it (TITAN RTX, Turing, is five from GTX TITAN X, Maxwell)."""
    digits = "".join(ch for ch in typed if ch.isdigit())
    if not "".join(ch for ch in spelling if ch.isdigit()).startswith(digits):
        return False
    return typed in spelling or _edits(typed, spelling) <= 2


def _did_you_mean(text: str) -> str:
    """``; did you mean H100 (H100-SXM5-80GB)?``: the closest name or alias of each device close to a misspelt
    one (`_could_be_a_typo`), those that contain it alone where some do (V100 PCIe is not P100-PCIe), at most
    three devices; "" if none is close."""
    spelled = {}
    for dev in list_devices():
        for name in (dev.name, *dev.aliases):
            spelled.setdefault(_normalise(name), (name, dev))
    suggestions: dict[str, str] = {}  # device name -> the closest spelling, closest devices first
    typed = _normalise(text)
    close = [
        key
        for key in difflib.get_close_matches(typed, spelled, n=len(spelled), cutoff=0.7)
        if _could_be_a_typo(typed, key)
    ]
    for key in [key for key in close if typed in key] or close:
        name, dev = spelled[key]
        suggestions.setdefault(dev.name, name if name == dev.name else f"{name} ({dev.name})")
    if not suggestions:
        return ""
    return f"; did you mean {' or '.join(list(suggestions.values())[:3])}?"
