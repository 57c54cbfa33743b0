"""The measured data-set schema shared by `measure`, `calibrate` and `validate`.

One CSV row per launch candidate, in the columns of the V100 data the estimator's
authors shared (docs/validation/v100.md): block and folding, then measured values per
lattice update; an empty cell means "not measured". Files written by
`measure` add the GPU, its driver, the date, the median kernel time and the
kernel (`kernel_record`: its fields' types and shapes, its loads and stores),
which `validate` checks the SPEC against.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..devices import Device, get_device
from ..errors import DeviceError, MeasurementError
from ..launch import LaunchConfig
from ..outputs import replacing_file
from ..resources import ResourceUsage

LAUNCH_COLUMNS = ("bx", "by", "bz", "fx", "fy", "fz")
#: what `measure` adds to the shared schema
RUN_COLUMNS = ("device", "driver", "date", "time_ms", "fields", "accesses")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def kernel_record(model) -> dict[str, str]:
    """What identifies a measured kernel in its data set: the domain and fields (name, type, shape) and the
    stencil (loads and stores per thread of the harvested kernel)."""
    return {
        "fields": "; ".join(f"{f.name} {f.dtype} {'x'.join(map(str, f.shape))}" for f in model.fields),
        "accesses": f"{_count(len(model.loads), 'load')}, {_count(len(model.stores), 'store')}",
    }


@dataclass(frozen=True)
class Metric:
    """A measured quantity and the prediction it is compared with.

    `predicted_key` names the estimator metric (bytes or cycles per lattice
    update); None means the predicted throughput of the performance model.
    """

    name: str
    label: str
    column: str
    predicted_key: str | None
    unit: str


METRICS = (
    Metric("dram_load", "DRAM load", "meas_dram_load_B_per_lup", "dram_load_bytes_per_lup", "B/Lup"),
    Metric("dram_store", "DRAM store", "meas_dram_store_B_per_lup", "dram_store_bytes_per_lup", "B/Lup"),
    Metric("l2_load", "L2 load", "meas_l2_load_B_per_lup", "l2_load_bytes_per_lup", "B/Lup"),
    Metric("l2_store", "L2 store", "meas_l2_store_B_per_lup", "l2_store_bytes_per_lup", "B/Lup"),
    Metric("l1_load", "L1 load wavefronts", "meas_l1_wavefronts_per_lup", "l1_cycles_per_lup", "cycles/Lup"),
    Metric("glups", "throughput", "meas_glups", None, "GLup/s"),
)
METRIC_BY_NAME = {m.name: m for m in METRICS}
#: the columns of the shared V100 file, in its order (L1 wavefronts are our addition)
SCHEMA = LAUNCH_COLUMNS + tuple(m.column for m in METRICS if m.name != "l1_load")
#: the most bytes one lattice update may plausibly move: the largest kernels here (D3Q27 in double, 2 x 27 x 8 =
#: 432 B) move under a kilobyte, so a megabyte is a unit or counter error (1e300 B/Lup), not a measurement
MAX_BYTES_PER_LUP = 1e6


@dataclass(frozen=True)
class Measurement:
    """One measured launch candidate: its values by metric name, and how it was run."""

    launch: LaunchConfig
    values: dict[str, float]
    run: dict[str, str] = field(default_factory=dict)
    #: the registers and spills of the code that ran, where the data records them (`kernel_tuner.TunedRun`)
    resources: ResourceUsage | None = None


@dataclass(frozen=True)
class Dataset:
    path: str
    rows: tuple[Measurement, ...]

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """The metrics measured in at least one row, in schema order."""
        return tuple(m for m in METRICS if any(m.name in r.values for r in self.rows))

    def recorded(self, column: str) -> set[str]:
        """The values the rows give in a run column (`RUN_COLUMNS`), none where the data does not record it."""
        return {r.run[column] for r in self.rows if column in r.run}

    @property
    def blocks(self) -> list[tuple[int, int, int]]:
        return sorted({r.launch.block for r in self.rows})

    @property
    def folds(self) -> list[tuple[int, int, int]]:
        return sorted({r.launch.fold for r in self.rows})


def other_gpu(name: str, recorded: set[str], device: Device) -> list[str]:
    """A warning where the data names a library GPU other than `device` (a calibrated file keeps its GPU's name)."""
    others = set()
    for gpu in recorded:
        try:
            measured = get_device(gpu)
        except DeviceError:  # a GPU the library does not know: nothing to compare
            continue
        if measured.name != device.name:
            others.add(gpu)
    return [f"{name} was measured on {', '.join(sorted(others))}, not on {device.name}"] if others else []


def check_volume(where: str, metric: str, value: float) -> float:
    """`value` of `metric` (a data-set metric name) if it is not a volume beyond `MAX_BYTES_PER_LUP`."""
    if METRIC_BY_NAME[metric].unit == "B/Lup" and value > MAX_BYTES_PER_LUP:
        raise MeasurementError(
            f"{where}: {METRIC_BY_NAME[metric].label} of {value:.6g} B/Lup is beyond the plausible "
            f"{MAX_BYTES_PER_LUP:.0e} B per lattice update"
        )
    return value


def _integer(path, line, column, text) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise MeasurementError(f"{path} line {line}: column {column} = {text!r} is not an integer") from None


def _measured(path, line, column, text) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise MeasurementError(f"{path} line {line}: column {column} = {text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise MeasurementError(f"{path} line {line}: column {column} = {text!r} must be a positive number")
    return value


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    """The header and the rows (dicts) of a CSV data file; a file that cannot be read as CSV text is one error."""
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            # a ';'-separated file reads as one column, and the columns it has would be called missing
            if len(reader.fieldnames or ()) == 1 and ";" in reader.fieldnames[0]:
                raise MeasurementError(
                    f"data file {path} separates its columns with ';', not ',': save it as "
                    "comma-separated CSV (with '.' as the decimal point)"
                )
            rows = []
            for row in reader:
                if None in row:  # DictReader keeps the cells beyond the header under None
                    raise MeasurementError(
                        f"{path} line {reader.line_num} has {len(row[None])} more cells than "
                        f"the {len(reader.fieldnames)} columns of its header"
                    )
                missing = sum(v is None for v in row.values())  # DictReader fills the cells a line lacks with None
                if missing:
                    raise MeasurementError(
                        f"{path} line {reader.line_num} has {missing} fewer cells than the "
                        f"{len(reader.fieldnames)} columns of its header"
                    )
                rows.append(row)
            return list(reader.fieldnames or []), rows
    except FileNotFoundError:
        raise MeasurementError(f"data file {path} does not exist") from None
    except OSError as e:
        raise MeasurementError(f"cannot read data file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise MeasurementError(f"data file {path} is not CSV text ({e.reason} at byte {e.start})") from None
    except csv.Error as e:
        raise MeasurementError(f"data file {path} is not CSV text ({e})") from None


def read_dataset(path: str | Path) -> Dataset:
    """Read and check a measured data set; every problem names the line and column."""
    path = Path(path)
    header, lines = read_csv(path)
    missing = [c for c in LAUNCH_COLUMNS if c not in header]
    if missing:
        raise MeasurementError(f"data file {path} lacks the column(s) {', '.join(missing)}")
    if not any(m.column in header for m in METRICS):
        raise MeasurementError(f"data file {path} has no measured column ({', '.join(m.column for m in METRICS)})")
    rows, seen = [], {}
    for line, raw in enumerate(lines, start=2):
        ints = [_integer(path, line, c, raw[c]) for c in LAUNCH_COLUMNS]
        try:
            launch = LaunchConfig(tuple(ints[:3]), tuple(ints[3:]))
        except Exception as e:
            raise MeasurementError(f"{path} line {line}: {e}") from None
        if launch in seen:
            raise MeasurementError(f"{path} line {line} repeats candidate {launch.label} of line {seen[launch]}")
        seen[launch] = line
        values = {}
        for m in METRICS:
            v = _measured(path, line, m.column, raw.get(m.column))
            if v is not None:
                values[m.name] = check_volume(f"{path} line {line}", m.name, v)
        run = {c: raw[c] for c in RUN_COLUMNS if raw.get(c)}
        rows.append(Measurement(launch, values, run))
    if not rows:
        raise MeasurementError(f"data file {path} has no rows")
    return Dataset(str(path), tuple(rows))


def write_dataset(path: str | Path, rows: list[Measurement]) -> None:
    """Write rows in the shared schema, plus L1 wavefronts and the run columns where any row has them (whole, or
    not at all: `outputs.replacing_file`)."""
    columns = list(SCHEMA)
    if any("l1_load" in r.values for r in rows):
        columns.append(METRIC_BY_NAME["l1_load"].column)
    columns += [c for c in RUN_COLUMNS if any(c in r.run for r in rows)]
    by_column = {m.column: m.name for m in METRICS}
    with replacing_file(path, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            launch = dict(zip(LAUNCH_COLUMNS, r.launch.block + r.launch.fold))
            cells = []
            for c in columns:
                if c in launch:
                    cells.append(launch[c])
                elif c in by_column:
                    v = r.values.get(by_column[c])
                    cells.append("" if v is None else f"{v:.6g}")
                else:
                    cells.append(r.run.get(c, ""))
            w.writerow(cells)
