"""Nsight Compute counters per candidate: `measure --ncu` re-runs itself under ``ncu``.

The child process (the same command with ``--ncu-pass``) launches every
candidate once, in the parent's order; ncu profiles only launches of the
measured kernels (by function name) with its defaults, i.e. caches flushed and
clocks locked to base before each, and exports a report. The counters are
read back with ``ncu --import REPORT --csv --page raw --print-units base``.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import MeasurementError
from ..launch import LaunchConfig

#: counter -> (metric name in the data set, unit): "byte" counts bytes, "sector" L2 sectors
NCU_METRICS = {
    "dram__bytes_read.sum": ("dram_load", "byte"),
    "dram__bytes_write.sum": ("dram_store", "byte"),
    "lts__t_sectors_srcunit_tex_op_read.sum": ("l2_load", "sector"),
    "lts__t_sectors_srcunit_tex_op_write.sum": ("l2_store", "sector"),
    # L1 data-pipe wavefronts of global (and local) loads: one per L1 cycle, the estimator's L1 cycles
    "l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum": ("l1_load", "wavefront"),
}
#: counters that other tools' exports (KTT's, for one) name differently, by the same metric names;
#: DRAM counts 32-B sectors like L2 (Nsight Compute Kernel Profiling Guide, memory tables)
OTHER_COUNTER_METRICS = {
    "dram__sectors_read.sum": ("dram_load", "sector"),
    "dram__sectors_write.sum": ("dram_store", "sector"),
    "lts__t_sectors_op_read.sum": ("l2_load", "sector"),
    "lts__t_sectors_op_write.sum": ("l2_store", "sector"),
}
#: every counter a data file may give a data-set metric by
COUNTER_METRICS = {**NCU_METRICS, **OTHER_COUNTER_METRICS}
#: local-memory (register spill) traffic: where nonzero, it is in the L2 and DRAM counters too
SPILL_COUNTERS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")


def ncu_profile_command(ncu: str, report: Path, kernel_names: list[str], child_argv: list[str]) -> list[str]:
    names = "|".join(re.escape(n) for n in kernel_names)
    return [
        ncu,
        "--metrics",
        ",".join(NCU_METRICS),
        "--kernel-name-base",
        "function",
        "--kernel-name",
        f"regex:^({names})$",
        "--export",
        str(report),
        "--force-overwrite",
        *child_argv,
    ]


def _last_error(text: str) -> str:
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if "ERROR" in l]
    return (errors or lines or ["no output"])[-1]


def _run(cmd: list[str]) -> str:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise MeasurementError(
            f"{Path(cmd[0]).name} failed (exit {result.returncode}): {_last_error(result.stderr + result.stdout)}"
        )
    return result.stdout


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """The rows of ``ncu --csv --page raw``, one per profiled launch in ID order (the units row dropped)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise MeasurementError(f"ncu printed no raw CSV page: {_last_error(text)}")
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines[start:]))) if r.get("ID", "").strip().isdigit()]
    return sorted(rows, key=lambda r: int(r["ID"]))


def _number(row: dict, column: str) -> float:
    text = (row.get(column) or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        raise MeasurementError(f"ncu reports {column} = {row.get(column)!r} for launch {row.get('ID')}") from None


def counters_per_lattice_update(
    counters: dict[str, float], lattice_updates: int, sector_bytes: int
) -> dict[str, float]:
    """Data-set metrics per lattice update from counter totals of one launch (`COUNTER_METRICS`; others ignored)."""
    scale = {"byte": 1, "sector": sector_bytes, "wavefront": 1}
    out = {}
    for counter, total in counters.items():
        if counter in COUNTER_METRICS:
            name, unit = COUNTER_METRICS[counter]
            out[name] = total * scale[unit] / lattice_updates
    return out


def per_lattice_update(row: dict, lattice_updates: int, sector_bytes: int) -> dict[str, float]:
    """Measured values per lattice update, by data-set metric name, from one profiled launch.

    A counter the export has no column for is one this GPU's Nsight Compute does not know (the
    L1 data-pipe wavefronts of ``l1_load`` on Hopper): its metric is left out, not guessed.
    """
    counters = {c: _number(row, c) for c in NCU_METRICS if c in row}
    return counters_per_lattice_update(counters, lattice_updates, sector_bytes)


def unreported_counters(rows: list[dict]) -> list[str]:
    """The requested counters that ncu's export has no column for."""
    return [c for c in NCU_METRICS if rows and c not in rows[0]]


def _block_of(row: dict) -> tuple[int, ...] | None:
    text = row.get("Block Size")
    return tuple(int(v) for v in re.findall(r"\d+", text)) if text else None


def profile(
    child_argv: list[str],
    launches: list[LaunchConfig],
    kernel_names: list[str],
    lattice_updates: int,
    sector_bytes: int,
    ncu: str = "ncu",
) -> dict[LaunchConfig, dict[str, float]]:
    """Counters per candidate: run `child_argv` (which launches `launches` once each, in order) under ncu."""
    exe = shutil.which(ncu)
    if exe is None:
        raise MeasurementError(f"--ncu needs Nsight Compute: {ncu!r} is not on PATH (give its path with --ncu-path)")
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-ncu-") as tmp:
        report = Path(tmp) / "candidates"
        _run(ncu_profile_command(exe, report, kernel_names, child_argv))
        rows = parse_raw_csv(
            _run([exe, "--import", f"{report}.ncu-rep", "--csv", "--page", "raw", "--print-units", "base"])
        )
    missing = unreported_counters(rows)
    if len(missing) == len(NCU_METRICS):
        raise MeasurementError(f"ncu reports none of the counters {', '.join(NCU_METRICS)} on this GPU")
    for counter in missing:
        print(
            f"pystencils-perf: ncu does not report {counter} on this GPU: meas_{NCU_METRICS[counter][0]} is left empty",
            file=sys.stderr,
        )
    if len(rows) != len(launches):
        raise MeasurementError(f"ncu profiled {len(rows)} launches, but {len(launches)} candidates were launched")
    out = {}
    for launch, row in zip(launches, rows):
        block = _block_of(row)
        if block is not None and block != launch.block:
            raise MeasurementError(f"ncu launch {row['ID']} ran block {block}, expected candidate {launch.label}")
        out[launch] = per_lattice_update(row, lattice_updates, sector_bytes)
    return out
