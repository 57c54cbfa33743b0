"""Kernel Tuner cache files (JSON, ``.json.gz``), KTT's JSON output, and flat CSV extracts as measured data sets.

A Kernel Tuner cache holds one entry per configuration of the tunable
parameters, with the mean kernel time in milliseconds (``time``) or a failure
marker (``InvalidConfig``, ``CompilationFailedConfig``, ``RuntimeFailedConfig``).
The block-size parameters (``block_size_x/y/z`` by default, Kernel Tuner's own
names) become the launch's block; every other parameter (tile sizes, switches)
picks a *variant* of the kernel, which the SPEC describes (`TunableSpec`).
Throughput is the SPEC's lattice updates per launch over the measured time;
`read_kernel_tuner` says what a flat CSV may hold.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MeasurementError, PerfError
from ..launch import LaunchConfig
from ..resources import RECORDED_ARCH, ResourceUsage
from .dataset import Dataset, Measurement, check_volume, read_csv
from .ncu import SPILL_COUNTERS, counters_per_lattice_update

#: Kernel Tuner's default names of the block-size parameters
BLOCK_PARAMETERS = ("block_size_x", "block_size_y", "block_size_z")
#: the units a time may be in: name -> (milliseconds per unit, the unit's name in errors)
TIME_UNITS = {
    "ms": (1.0, "milliseconds"),
    "us": (1e-3, "microseconds"),
    "ns": (1e-6, "nanoseconds"),
    "s": (1e3, "seconds"),
}
#: KTT's ``Metadata.TimeUnit`` (its enum `ktt::TimeUnit`) -> our unit
KTT_TIME_UNITS = {"Nanoseconds": "ns", "Microseconds": "us", "Milliseconds": "ms", "Seconds": "s"}
#: KTT's status of a configuration that ran and was timed
KTT_OK = "Ok"
#: the most registers a thread can hold on any GPU we list (NVIDIA: 255; AMD: 512 VGPRs with the AGPRs)
MAX_REGISTERS_PER_THREAD = 512
#: the plausible time of one launch, in ms: a launch takes a microsecond or more (its latency alone), and no tuning
#: run waits a day for one; a time outside (1e300, 1e-300) is a unit or export error, which would give throughputs
#: of hundreds of digits or zero
LAUNCH_MS_RANGE = (1e-6, 86_400_000.0)
#: columns a flat CSV may give the mean kernel time under, first match wins: name -> unit
TIME_COLUMNS = {"time": "ms", "time_ms_mean": "ms", "time_ms": "ms", "duration_us": "us"}
#: what Kernel Tuner's `RegisterObserver` writes into a cache entry: the registers per thread of its code
REGISTERS_FIELD = "num_regs"
#: fields that are results (Kernel Tuner's, and what KTT reports of a launch), not tunable parameters
RESULT_FIELDS = {
    "time",
    "times",
    "compile_time",
    "verification_time",
    "benchmark_time",
    "strategy_time",
    "framework_time",
    "timestamp",
    "GFLOP/s",
    "registers",
    "shared_mem_bytes",
    "grid_x",
    "grid_y",
    REGISTERS_FIELD,
}


def is_counter(column: str) -> bool:
    """Nsight Compute names every counter ``unit__quantity``; no tunable parameter looks like that."""
    return "__" in column.strip("_")


@dataclass(frozen=True)
class TunedRun:
    """One measured configuration: its tunable parameters and the mean time in milliseconds."""

    params: dict[str, Any]
    time_ms: float
    #: Nsight Compute counter totals of the run, by counter name (empty for Kernel Tuner caches)
    counters: dict[str, float] = field(default_factory=dict)
    #: the registers (and spills) its code ran with, where the file records them: KTT's output does
    #: (`ktt_resources`), a Kernel Tuner cache where its `RegisterObserver` wrote ``num_regs``
    resources: ResourceUsage | None = None

    @property
    def spills(self) -> bool:
        """Whether the run moved local memory (register spills), which its volume counters include."""
        return any(self.counters.get(c, 0.0) > 0 for c in SPILL_COUNTERS)


@dataclass(frozen=True)
class TunerData:
    path: str
    device_name: str
    runs: tuple[TunedRun, ...]
    #: parameters of the configurations in the file that did not run (failure markers, missing times)
    failed: tuple[dict[str, Any], ...] = ()
    #: Kernel Tuner's ``problem_size`` where the file records it (a cache does, a flat CSV does not)
    problem_size: tuple[int, ...] | None = None


def number_or_text(value: str) -> int | float | str:
    """A parameter's value as Kernel Tuner holds it: an int, else a float, else the text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _time(path, where, value, unit: str = "ms") -> float | None:
    """The measured time in ms, or None for Kernel Tuner's failure markers; anything else is an error."""
    if isinstance(value, str):
        if value.endswith("Config") or not value.strip():
            return None
        value = number_or_text(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise MeasurementError(f"{path} {where}: time {value!r} is not a positive number of {TIME_UNITS[unit][1]}")
    time_ms = float(value) * TIME_UNITS[unit][0]
    low, high = LAUNCH_MS_RANGE
    if not low <= time_ms <= high:
        raise MeasurementError(
            f"{path} {where}: time {value!r} {TIME_UNITS[unit][1]} is outside the plausible 1 ns to 1 day of one launch"
        )
    return time_ms


def _counter(path, where: str, name: str, value) -> float:
    number = number_or_text(value) if isinstance(value, str) else value
    if not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number) or number < 0:
        raise MeasurementError(f"{path} {where}: counter {name} = {value!r} is not a non-negative number")
    return float(number)


def load_cache_json(path: Path) -> dict:
    """A Kernel Tuner cache file as JSON (header and ``cache`` table), gzipped or not, closed or interrupted."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as fh:
            text = fh.read()
    except (OSError, EOFError, zlib.error) as e:  # EOFError: a truncated .gz (an interrupted download or copy)
        raise MeasurementError(f"cannot read Kernel Tuner file {path}: {getattr(e, 'strerror', None) or e}") from None
    except UnicodeDecodeError as e:
        raise MeasurementError(
            f"{path} is not a Kernel Tuner cache (not UTF-8 text: {e.reason} at byte {e.start})"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:  # Kernel Tuner closes the cache's braces only when tuning ends: an interrupted run leaves them open
        return json.loads(text.rstrip().rstrip(",") + "}}")
    except json.JSONDecodeError as e:
        raise MeasurementError(f"{path} is not a Kernel Tuner cache (invalid JSON: {e})") from None


def run_to_run_spreads(cache: dict) -> list[float]:
    """The timing noise of a Kernel Tuner cache (`load_cache_json`): per configuration with repeated runs
    (``times``), the slowest over the fastest run, minus 1."""
    return [
        max(e["times"]) / min(e["times"]) - 1
        for e in cache["cache"].values()
        if isinstance(e.get("times"), list) and e["times"] and min(e["times"]) > 0
    ]


def _read_json(path: Path) -> TunerData:
    data = load_cache_json(path)
    if isinstance(data, dict) and "Results" in data and "Metadata" in data:
        return _read_ktt(path, data)
    if not isinstance(data, dict) or not isinstance(data.get("cache"), dict):
        raise MeasurementError(f"{path} is not a Kernel Tuner cache: no 'cache' table of configurations")
    runs, failed = [], []
    # Kernel Tuner names the tunable parameters; an entry's other fields are results and observers' outputs
    # (registers, power, a verification error), which would otherwise split the configurations into variants
    keys = data.get("tune_params_keys")
    for key, entry in data["cache"].items():
        if not isinstance(entry, dict):
            raise MeasurementError(f"{path} cache entry {key!r} is not a table")
        if "time" not in entry:
            raise MeasurementError(f"{path} cache entry {key!r} has no 'time'")
        time_ms = _time(path, f"cache entry {key!r}", entry["time"])
        if isinstance(keys, list) and all(k in entry for k in keys):
            params = {k: entry[k] for k in keys}
        else:
            params = {k: v for k, v in entry.items() if k not in RESULT_FIELDS and not is_counter(k)}
        if time_ms is None:
            failed.append(params)
            continue
        counters = {k: _counter(path, f"cache entry {key!r}", k, v) for k, v in entry.items() if is_counter(k)}
        runs.append(TunedRun(params, time_ms, counters, _observed_registers(path, key, entry.get(REGISTERS_FIELD))))
    return TunerData(str(path), str(data.get("device_name", "")), tuple(runs), tuple(failed), _problem_size(data))


def _observed_registers(path, key: str, registers) -> ResourceUsage | None:
    """The registers Kernel Tuner's `RegisterObserver` recorded for a cache entry (None where it did not)."""
    if registers is None:
        return None
    if type(registers) is not int or not 0 < registers <= MAX_REGISTERS_PER_THREAD:
        raise MeasurementError(
            f"{path} cache entry {key!r}: {REGISTERS_FIELD} = {registers!r} is not a number of registers per thread "
            f"(1-{MAX_REGISTERS_PER_THREAD})"
        )
    return ResourceUsage(RECORDED_ARCH, registers, 0, 0, 0, "Kernel Tuner's RegisterObserver")


def ktt_resources(path, where: str, computation: dict, version: str) -> ResourceUsage | None:
    """The registers, local memory and shared memory KTT recorded for a computation (``CompilationData``): its local
    memory per thread (``PrivateMemorySize``, which spills make) counts as the bytes each thread spills, stored
    and loaded once (on KTT's RTX 2080 Ti output 0.99-1.03 times the spill stores of the same registers compiled,
    docs/validation); None where it recorded none."""
    compiled = computation.get("CompilationData")
    if not isinstance(compiled, dict) or "RegistersCount" not in compiled:
        return None
    numbers = {k: compiled.get(k, 0) for k in ("RegistersCount", "PrivateMemorySize", "LocalMemorySize")}
    for name, value in numbers.items():
        if type(value) is not int or value < 0:
            raise MeasurementError(f"{path} {where}: CompilationData.{name} = {value!r} is not a number of bytes")
    registers, local, shared = numbers.values()
    if not 0 < registers <= MAX_REGISTERS_PER_THREAD:
        return None  # a kernel KTT did not compile itself (a registers count of 0)
    return ResourceUsage(
        RECORDED_ARCH, registers, local, local, shared, f"KTT {version}".strip(), spill_kept_bytes=local
    )


def _read_ktt(path: Path, data: dict) -> TunerData:
    """KTT's JSON output (``Metadata`` and ``Results``, as KTT 2 writes it): a result's parameters are its
    ``Configuration``'s names and values, its time ``TotalDuration`` in the metadata's ``TimeUnit``; a status other
    than ``Ok`` is a configuration that did not run. Counters are those of ``ProfilingData``, and the registers
    those of ``CompilationData`` (`ktt_resources`), where the result ran one kernel (KTT's own examples)."""
    metadata, results = data["Metadata"], data["Results"]
    unit = KTT_TIME_UNITS.get(metadata.get("TimeUnit")) if isinstance(metadata, dict) else None
    if unit is None:
        found = metadata.get("TimeUnit") if isinstance(metadata, dict) else metadata
        raise MeasurementError(
            f"{path}: KTT output's Metadata.TimeUnit = {found!r:.40} is none of {', '.join(KTT_TIME_UNITS)}"
        )
    if not isinstance(results, list):
        raise MeasurementError(f"{path}: KTT output's Results is not a list of configurations")
    runs, failed = [], []
    for number, result in enumerate(results):
        where = f"result {number}"
        pairs = result.get("Configuration") if isinstance(result, dict) else None
        if not isinstance(pairs, list) or not all(
            isinstance(p, dict) and isinstance(p.get("Name"), str) for p in pairs
        ):
            raise MeasurementError(f"{path} {where}: its Configuration is not a list of Name and Value pairs")
        params = {p["Name"]: p.get("Value") for p in pairs}
        if result.get("Status") != KTT_OK:
            failed.append(params)
            continue
        time_ms = _time(path, where, result.get("TotalDuration"), unit)
        if time_ms is None:
            failed.append(params)
            continue
        computations = result.get("ComputationResults")
        counters, resources = {}, None
        if isinstance(computations, list) and len(computations) == 1 and isinstance(computations[0], dict):
            listed = (computations[0].get("ProfilingData") or {}).get("Counters") or []
            counters = {
                c["Name"]: _counter(path, where, c["Name"], c.get("Value"))
                for c in listed
                if isinstance(c, dict) and isinstance(c.get("Name"), str)
            }
            resources = ktt_resources(path, where, computations[0], str(metadata.get("KttVersion", "")))
        runs.append(TunedRun(params, time_ms, counters, resources))
    return TunerData(str(path), str(metadata.get("Device", "")), tuple(runs), tuple(failed))


def _problem_size(data: dict) -> tuple[int, ...] | None:
    """The cache's problem size where it is numbers (Kernel Tuner also takes names of parameters there)."""
    size = data.get("problem_size")
    size = size if isinstance(size, list) else [size]
    if size and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in size):
        return tuple(size)
    return None


def _read_csv(path: Path) -> TunerData:
    header, lines = read_csv(path)
    column = next((c for c in TIME_COLUMNS if c in header), None)
    if column is None:
        raise MeasurementError(f"{path} has no time column ({', '.join(TIME_COLUMNS)})")
    skip = set(TIME_COLUMNS) | RESULT_FIELDS | {"gpu", "device_name", "time_ms_min", "time_ms_median", "n_reps"}
    counters = [c for c in header if is_counter(c)]
    runs, failed, devices = [], [], set()
    for line, raw in enumerate(lines, start=2):
        time_ms = _time(path, f"line {line}", raw[column], TIME_COLUMNS[column])
        params = {k: number_or_text(v) for k, v in raw.items() if k not in skip and not is_counter(k)}
        if time_ms is None:
            failed.append(params)
            continue
        devices.add(raw.get("device_name", ""))
        runs.append(TunedRun(params, time_ms, {c: _counter(path, f"line {line}", c, raw[c]) for c in counters}))
    return TunerData(str(path), ", ".join(sorted(d for d in devices if d)), tuple(runs), tuple(failed))


def read_kernel_tuner(path: str | Path) -> TunerData:
    """A Kernel Tuner cache (``.json``, ``.json.gz``), KTT's JSON output (the same suffixes), or a flat CSV with
    parameter columns and a time column.

    A flat CSV may also be a KTT export (its kernel time in ``duration_us``) with
    Nsight Compute counters as columns (names with ``__``, e.g.
    ``dram__sectors_read.sum``): those of `ncu.COUNTER_METRICS` become measured
    volumes per lattice update, none of them is a tunable parameter, and a run with
    local-memory (spill) traffic keeps its time but not its volumes, since the
    spills are in its L2 and DRAM counters.
    """
    path = Path(path)
    if not path.exists():
        raise MeasurementError(f"data file {path} does not exist")
    data = _read_csv(path) if path.suffix == ".csv" else _read_json(path)
    if not data.runs and not data.failed:  # else the SPEC's fixed parameters would be blamed for matching none
        empty = "it has no rows" if path.suffix == ".csv" else "it lists no configurations"
        raise MeasurementError(f"{path} holds no measurements ({empty})")
    return data


def is_kernel_tuner_file(path: str | Path) -> bool:
    """True for JSON caches and for CSVs with Kernel Tuner's block-size columns (not the bx,by,... schema);
    KTT exports name them in capitals."""
    path = Path(path)
    if path.suffix != ".csv":
        return path.name.endswith((".json", ".json.gz"))
    try:
        with open(path, newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False  # reading it as a data set names the problem
    return BLOCK_PARAMETERS[0] in (h.lower() for h in header)


@dataclass(frozen=True)
class TunableSpec:
    """What validation needs to know of a tuned kernel, from a SPEC file.

    :param kernel_for: the kernel (anything an adapter harvests) for one combination of the
        tunable parameters that are not the block size.
    :param lattice_updates: useful updates per launch (throughput = updates / time).
    :param fixed_parameters: parameters the description assumes; other rows are left out.
    """

    path: str
    kernel_for: Callable[[dict], Any]
    lattice_updates: int
    fixed_parameters: dict
    block_parameters: tuple[str, ...] = BLOCK_PARAMETERS

    def kernel(self, variant: dict):
        """`kernel_for` of a variant's parameters, with the fixed ones; its failure is one line naming both."""
        params = {**self.fixed_parameters, **variant}
        try:
            kernel = self.kernel_for(params)
        except PerfError:
            raise
        except Exception as e:
            raise PerfError(f"SPEC file {self.path}: kernel_for({params}) failed: {type(e).__name__}: {e}") from None
        # a missing return (None), a number, text, a dict: no adapter recognises a builtin other than assignments
        if kernel is None or (type(kernel).__module__ == "builtins" and not isinstance(kernel, (list, tuple))):
            what = "None" if kernel is None else f"the {type(kernel).__name__} {kernel!r:.40}"
            raise PerfError(f"SPEC file {self.path}: kernel_for({params}) returned {what}, not a kernel")
        return kernel


def load_tunable_spec(path: str | Path) -> TunableSpec:
    """Read a SPEC that defines `kernel_for(params)` and `lattice_updates` (and optionally
    `fixed_parameters`, `block_parameters`): a Python file, or one a plugin reads (`spec.spec_namespace`)."""
    from ..spec import spec_namespace

    namespace = spec_namespace(path)
    for name in ("kernel_for", "lattice_updates"):
        if name not in namespace:
            raise PerfError(f"SPEC file {path} lacks `{name}`, which validating Kernel Tuner data needs")
    updates = namespace["lattice_updates"]
    if isinstance(updates, bool) or not isinstance(updates, int) or updates < 1:
        raise PerfError(f"SPEC file {path}: lattice_updates = {updates!r} is not a positive integer")
    fixed = namespace.get("fixed_parameters", {})
    if not isinstance(fixed, dict) or not all(isinstance(k, str) for k in fixed):
        raise PerfError(
            f"SPEC file {path}: fixed_parameters = {fixed!r:.80} is not a dict of parameter names to values"
        )
    blocks = namespace.get("block_parameters", BLOCK_PARAMETERS)
    if isinstance(blocks, str) or not isinstance(blocks, (tuple, list)) or not all(isinstance(b, str) for b in blocks):
        raise PerfError(f"SPEC file {path}: block_parameters = {blocks!r:.80} is not a sequence of parameter names")
    return TunableSpec(str(path), namespace["kernel_for"], updates, dict(fixed), tuple(blocks))


@dataclass(frozen=True)
class Variant:
    """The measured blocks of one combination of the other tunable parameters."""

    params: dict[str, Any]
    dataset: Dataset

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params.items())


def _launch(path, params: dict, block_parameters) -> LaunchConfig:
    if block_parameters[0] not in params:
        raise MeasurementError(f"{path}: configuration {params} has no {block_parameters[0]}")
    for p in block_parameters:  # int() would take 32.5 as 32 and "32" as 32, another configuration than measured
        value = params.get(p, 1)
        if type(value) is not int or value < 1:
            raise MeasurementError(f"{path}: configuration {params}: {p} = {value!r} is not a positive integer")
    block = tuple(params.get(p, 1) for p in block_parameters)
    if len(block) > 3:
        raise MeasurementError(
            f"{path}: {len(block)} block parameters ({', '.join(block_parameters)}) for the three axes of a block"
        )
    return LaunchConfig(block + (1,) * (3 - len(block)))


def split_parameters(path, params: dict, spec: TunableSpec) -> tuple[dict, LaunchConfig] | None:
    """A configuration's variant (its parameters that are neither the block nor fixed) and launch, or None if
    it does not match `spec.fixed_parameters` (a flat extract may have dropped a fixed column: missing matches)."""
    if any(k in params and params[k] != v for k, v in spec.fixed_parameters.items()):
        return None
    others = {k: v for k, v in params.items() if k not in spec.block_parameters and k not in spec.fixed_parameters}
    return others, _launch(path, params, spec.block_parameters)


def variants(data: TunerData, spec: TunableSpec, sector_bytes: int = 32) -> list[Variant]:
    """Group the runs that match `spec.fixed_parameters` by their non-block parameters; throughput per run,
    and volumes per lattice update from the counters of runs without spills (`sector_bytes`: L2 and DRAM sector)."""
    groups: dict[tuple, dict] = {}
    for run in data.runs:
        split = split_parameters(data.path, run.params, spec)
        if split is None:
            continue
        others, launch = split
        rows = groups.setdefault(tuple(sorted(others.items())), {})
        if launch in rows:
            raise MeasurementError(f"{data.path}: {launch.label} with {others} is measured twice")
        glups = spec.lattice_updates / (run.time_ms * 1e-3) / 1e9
        volumes = {} if run.spills else counters_per_lattice_update(run.counters, spec.lattice_updates, sector_bytes)
        volumes = {k: check_volume(f"{data.path}: configuration {run.params}", k, v) for k, v in volumes.items()}
        rows[launch] = Measurement(
            launch, {"glups": glups, **volumes}, {"time_ms": f"{run.time_ms:.6g}"}, run.resources
        )
    if not data.runs:
        raise MeasurementError(
            f"{data.path}: all {len(data.failed)} configurations failed when measured: none has a time"
        )
    if not groups:
        raise MeasurementError(f"{data.path}: no measured configuration matches {spec.fixed_parameters}")
    return [Variant(dict(key), Dataset(data.path, tuple(rows.values()))) for key, rows in sorted(groups.items())]
