"""Tables shared by the convolution validations (A100, RTX A4000/A6000): ranking quality per row subset.

Both scripts rank every measured configuration once with the throughput model; its metrics hold
everything the paper's four limiters need, so the limiter model's prediction of the same candidates
is ``1 / max(FP, L1 banks, L2, DRAM)`` of `predict.limiter_times` (`limiters_prediction`), without
ranking again.
"""

from __future__ import annotations

import csv
import importlib.util
import itertools
import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from pystencils_perf.devices import get_device
from pystencils_perf.hookspecs import hookimpl
from pystencils_perf.models import throughput
from pystencils_perf.plugins import get_plugin_manager
from pystencils_perf.predict import Prediction, limiter_times
from pystencils_perf.resources import ResourceUsage
from pystencils_perf.validate import Validation, metric_errors, ranking_quality

HEADER = (
    "| rows | Spearman | predicted best / measured best | measured best's predicted rank | "
    "throughput MAPE % | mean error % | random pick (median) |",
    "|---|---|---|---|---|---|---|",
)


#: measured data of other projects, and the compiler reports of the measured kernel per configuration, by
#: architecture (data/external/README.md)
EXTERNAL_DATA = Path(__file__).resolve().parent / "data" / "external"


def external_data(name: str) -> Path:
    """A measured data file of ``data/external`` (its README gives each file's source and licence)."""
    return EXTERNAL_DATA / name


def _table_module():
    """``data/external/compile_convolution_registers.py``, which writes the tables and reads them (`read_table`)."""
    spec = importlib.util.spec_from_file_location(
        "compile_convolution_registers", EXTERNAL_DATA / "compile_convolution_registers.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


read_table = _table_module().read_table


class CompiledRegisters:
    """A `perf_launch_resources` plugin: each measured launch's registers and spills, as the convolution
    kernel of the caches compiles for it (``data/external/convolution15_registers_sm_XY.csv``, written by
    ``compile_convolution_registers.py``), for the convolution descriptions (`a100_convolution/convolution.py`).

    Kernel Tuner compiled the kernel per configuration, block size included, and the kernel's source is
    not in this repository; a user's own source is compiled per launch by the CUDA adapter instead.
    Register the plugin with ``get_plugin_manager().register(CompiledRegisters())``.
    """

    def __init__(self, folder: Path = EXTERNAL_DATA, table: Path | None = None, spills: bool = True):
        self.folder = folder
        #: one table for every device (a study's), instead of the folder's by architecture
        self.table = table
        #: False: each launch's registers alone, its spills left out (what the spills add, in a study)
        self.spills = spills

    def table_for(self, device, shared_memory: bool = False) -> Path | None:
        """The table of `device`'s architecture (``sm_86``, ``gfx90a``), if one was compiled; of the
        shared-memory variant's code (``convolution15_shmem_registers_<arch>.csv``) with `shared_memory`."""
        if self.table is not None:
            return self.table
        capability = device.compute_capability or ""
        arch = capability if capability.startswith("gfx") else "sm_" + capability.replace(".", "")
        path = self.folder / f"convolution15_{'shmem_' if shared_memory else ''}registers_{arch}.csv"
        return path if path.exists() else None

    @hookimpl
    def perf_launch_resources(self, kernel, model, launches, device):
        constants = getattr(kernel, "constants", {})
        shared_memory = bool(getattr(kernel, "shared_arrays", ()))
        path = self.table_for(device, shared_memory)
        if "tsx" not in constants or path is None:
            return None
        table = read_table(path)
        read_only = int(kernel.arrays[0].read_only)
        # the shared-memory tables key use_padding too, which the description names as a constant
        variant = (constants["tsx"], constants["tsy"], read_only) + ((constants["padding"],) if shared_memory else ())
        found = {launch: table.get((*launch.block[:2], *variant)) for launch in launches}
        if not self.spills:
            found = {launch: u and replace(u, spill_store_bytes=0, spill_load_bytes=0) for launch, u in found.items()}
        return {launch: usage for launch, usage in found.items() if usage is not None}


#: KTT's export of its convolution on the RTX 2080 Ti: per launch its duration, counters and registers
KTT_COUNTERS = "rtx2080ti_convolution15_ktt_counters.csv"
#: the KTT parameters that tell a launch's registers apart (block, tile, read-only loads)
KTT_REGISTER_KEY = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "READ_ONLY")


#: what KTT's kernel spills where its binary held 255 registers, compiled (`rtx2080ti_convolution/compile_spills.py`)
KTT_SPILLS = "ktt_convolution15_spills_sm_75.csv"
#: the shared loads each launch of KTT's kernel issues per thread, compiled
#: (`rtx2080ti_convolution/compile_shared_loads.py`)
KTT_SHARED_LOADS = "ktt_convolution15_shared_loads_sm_75.csv"


class KttRegisters:
    """A `perf_launch_resources` plugin: the registers each launch of KTT's convolution (PADDING 0, as the
    description `rtx2080ti_convolution/convolution_shmem.py` has it) ran with on the RTX 2080 Ti, from its
    counters' ``registers`` column, its spills where the kernel compiled for sm_75 has them with the same
    registers (`KTT_SPILLS`), and the shared loads its compiled code issues (`KTT_SHARED_LOADS`)."""

    def __init__(
        self,
        rows: list[dict],
        spills: Path | None = EXTERNAL_DATA / KTT_SPILLS,
        shared_loads: Path | None = EXTERNAL_DATA / KTT_SHARED_LOADS,
    ):
        self.registers = {tuple(int(r[k]) for k in KTT_REGISTER_KEY): int(r["registers"]) for r in rows}
        self.shared_loads = ktt_shared_loads(shared_loads) if shared_loads is not None else {}
        self.spills = {}
        if spills is not None and spills.exists():
            with open(spills, newline="") as fh:
                table = csv.DictReader(line for line in fh if not line.startswith("#"))
                # a compile stands in for the binary where it holds the binary's registers (nvcc 13 fits some
                # launches of 255 registers in KTT's run into 75-188, without spills; data/external/README.md)
                self.spills = {
                    key: (int(r["spill_store_bytes"]), int(r["spill_load_bytes"]))
                    for r in table
                    if self.registers.get(key := tuple(int(r[k]) for k in KTT_REGISTER_KEY)) == int(r["registers"])
                }

    @hookimpl
    def perf_launch_resources(self, kernel, model, launches, device):
        constants = getattr(kernel, "constants", {})
        if "tsx" not in constants or device.name != get_device("RTX-2080-Ti").name:
            return None
        variant = (constants["tsx"], constants["tsy"], int(kernel.arrays[0].read_only))
        keys = {launch: (*launch.block[:2], *variant) for launch in launches}
        return {
            launch: ResourceUsage(
                "sm_75",
                self.registers[key],
                *self.spills.get(key, (0, 0)),
                0,
                "KTT's run",
                shared_load_words_per_thread=self.shared_loads.get(key),
            )
            for launch, key in keys.items()
            if self.registers.get(key)
        }


def ktt_shared_loads(path: Path = EXTERNAL_DATA / KTT_SHARED_LOADS) -> dict[tuple[int, ...], float]:
    """The shared loads per thread of KTT's launches as compiled (`KTT_SHARED_LOADS`), by `KTT_REGISTER_KEY`; none
    where the table is missing."""
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        table = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {tuple(int(r[k]) for k in KTT_REGISTER_KEY): float(r["shared_load_words_per_thread"]) for r in table}


def ktt_padding_0_rows() -> list[dict]:
    """The rows of KTT's export (`KTT_COUNTERS`) with PADDING 0, the only padding the descriptions have, as
    strings."""
    with open(external_data(KTT_COUNTERS), newline="") as fh:
        return [r for r in csv.DictReader(fh) if int(r["PADDING"]) == 0]


def use_compiled_registers() -> None:
    """Register `CompiledRegisters` and `KttRegisters` with pystencils-perf's plugin manager (once)."""
    pm = get_plugin_manager()
    if not any(isinstance(plugin, CompiledRegisters) for plugin in pm.get_plugins()):
        pm.register(CompiledRegisters(), name="validation-compiled-registers")
    if not any(isinstance(plugin, KttRegisters) for plugin in pm.get_plugins()):
        pm.register(KttRegisters(ktt_padding_0_rows()), name="validation-ktt-registers")


def variant_params(pair) -> dict[str, str]:
    """The tunable parameters of a pair's variant label (``name=value ...``)."""
    return dict(item.split("=") for item in pair.variant.split())


def tile(pair) -> tuple[int, int]:
    """(tile_size_x, tile_size_y) of a pair's variant label."""
    params = variant_params(pair)
    return int(params["tile_size_x"]), int(params["tile_size_y"])


def read_only(pair) -> int:
    return 1 if "read_only=1" in pair.variant else 0


def with_predictions(validation: Validation, predict) -> Validation:
    """The same pairs with predictions from `predict(pair) -> Prediction` (no re-estimation)."""
    pairs = [replace(p, candidate=replace(p.candidate, prediction=predict(p))) for p in validation.pairs]
    return Validation(validation.dataset, validation.ranking, pairs, metric_errors(pairs), ranking_quality(pairs))


class FloatFields:
    """What `limiter_times` reads of a kernel model: its fields' element sizes (the convolutions' floats)."""

    fields = (type("Field", (), {"element_bytes": 4})(),)


def limiters_prediction(pair, device) -> Prediction:
    """The limiter model's prediction of a throughput-model candidate, from its metrics (L1 named as the
    throughput model names it)."""
    times = limiter_times(FloatFields, device, pair.candidate.metrics)
    times = {("L1 banks" if k == "L1" else k): v for k, v in times.items()}
    limiter = max(times, key=times.get)
    return Prediction(1.0 / times[limiter], limiter, times)


def quality_row(title: str, v: Validation) -> str | None:
    q, e = v.quality, v.error("glups")
    if q is None:
        return None
    return (
        f"| {title}: {q.points} | {q.spearman:.3f} | {100 * q.best_fraction:.1f} % | "
        f"{q.measured_best_predicted_rank} | {e.mape_percent:.1f} | {e.mean_error_percent:+.1f} | "
        f"{100 * q.median_fraction:.1f} % |"
    )


def summary(name: str, validation: Validation, subsets) -> list[str]:
    """The ranking and error numbers over `subsets`, (title, keep(pair)) pairs."""
    rows = [quality_row(title, validation.subset(keep)) for title, keep in subsets]
    return [f"### {name}", "", *HEADER, *[r for r in rows if r], ""]


#: the throughput model's constants that a GPU's tile-1x1 rows determine: the read-only path's tag passes per
#: cycle, of loads without and with an ``if`` of their own (both kinds are among the rows), and the overlap of
#: the terms. The lines the tag stage resolves per cycle (4, documented) and the loads in
#: flight per warp (an estimate) are not fitted: the latter, fitted freely on the A100, drifted to a value without
#: physical meaning (0.37 loads per warp)
FITTED = ("read_only_tag_passes_per_cycle", "guarded_read_only_tag_passes_per_cycle", "overlap_exponent")


def is_fit_row(pair) -> bool:
    """The rows a fit sees: tile 1x1, both read_only; tiles > 1 are held out."""
    return tile(pair) == (1, 1)


#: the log-scaled starting grid of a fit, per constant: Powell from the device's current constants (the A100's) alone
#: stopped in a local minimum on the H100's tile-1x1 rows (overlap exponent 1.17, MAPE 25.6 %; from the grid 4.9, 9.0 %)
START_GRID = np.linspace(-2.0, 2.0, 5)


def fit_tile_1x1(validation: Validation, device) -> tuple[dict, float, int]:
    """`FITTED` on `validation`'s tile-1x1 rows (Powell on the MAPE of throughput, log-scaled constants within
    e^-3..e^3, from the constants the device has now and from the best point of `START_GRID`, the better of the
    two): the values, the MAPE in percent, and the rows."""
    start = throughput.constants_for(device)
    rows = [p for p in validation.pairs if is_fit_row(p)]
    measured = np.array([p.measured.values["glups"] for p in rows])

    def mape(log_values):
        c = replace(start, **dict(zip(FITTED, np.exp(log_values))))
        predicted = np.array([throughput.prediction(FloatFields, device, p.candidate.metrics, c).glups for p in rows])
        return float(np.mean(np.abs(predicted - measured) / measured))

    current = np.log([getattr(start, k) for k in FITTED])
    grid = min(itertools.product(START_GRID, repeat=len(FITTED)), key=mape)
    best = min(
        (
            minimize(
                mape, x0, method="Powell", bounds=[(-3.0, 3.0)] * len(FITTED), options={"xtol": 1e-3, "ftol": 1e-5}
            )
            for x0 in (current, np.array(grid))
        ),
        key=lambda result: result.fun,
    )
    return dict(zip(FITTED, np.exp(best.x))), 100 * best.fun, len(rows)


def write_fit(device_name: str, data: str, values: dict, mape_percent: float, points: int, script: str) -> None:
    """Replace `device_name`'s fit in models/data/throughput.toml (its ``[devices."NAME".fit*]`` tables, written
    last) by `values`, fitted on `points` tile-1x1 rows of `data` (the cache and where it comes from) by `script`."""
    path = throughput.DATA_FILE
    prefix = f'[devices."{device_name}".fit'
    tables = re.split(r"\n(?=\[)", path.read_text().rstrip())  # the header comment, then one table each
    text = "\n".join(t for t in tables if not t.startswith(prefix)).rstrip() + "\n"
    provenance = (
        f"{data}, use_shmem 0, tile 1x1, read_only 0 and 1: {points} points, fitted "
        f"{date.today().isoformat()} by {script} --fit (Powell on the MAPE of throughput from the current "
        f"constants and from the best of a {' x '.join([str(len(START_GRID))] * len(FITTED))} start grid, "
        f"log-scaled constants within e^-3..e^3), MAPE {mape_percent:.1f} %; tiles > 1 held out"
    )
    text += f'\n{prefix}]\ndata = "{provenance}"\n'
    text += (
        f'\n{prefix}.mape_on_fitted_rows]\nvalue = {mape_percent / 100:.3f}\nkind = "fitted"\nsource = "the MAPE of '
        "throughput the fit reached on its rows (see data above): the model's measured error, within which "
        'candidates are tied"\n'
    )
    for k, v in values.items():
        text += f'\n{prefix}.{k}]\nvalue = {v:.4g}\nkind = "fitted"\nsource = "see data above"\n'
    path.write_text(text)
    throughput._table.cache_clear()


def refit_tile_1x1(validation: Validation, data: str, script: str) -> None:
    """Fit `validation`'s device's `FITTED` constants on its tile-1x1 rows (`fit_tile_1x1`), write them with their
    provenance (`write_fit`; `data`: the cache and where it comes from, `script`: who fitted) and say so."""
    device = validation.ranking.device
    values, mape_percent, points = fit_tile_1x1(validation, device)
    write_fit(device.name, data, values, mape_percent, points, script)
    print(
        f"fitted on {points} tile-1x1 rows of {device.name}: "
        + ", ".join(f"{k} = {v:.4g}" for k, v in values.items())
        + f" (MAPE {mape_percent:.1f} %)"
    )
