"""Registers and spills of the measured convolution kernel per configuration: the occupancy the caches' launches had.

    git -C <clone of MiloLurati/AutoTuning_AMD_vs_Nvidia_GPUs> show \
        9a7dcca284d81c4f7c005268a7e9968d905f0b1a:cache_scripts/convolution/convolution.cu > /tmp/convolution.cu
    python3 validation/data/external/compile_convolution_registers.py /tmp/convolution.cu sm_80 \
        validation/data/external/convolution15_registers_sm_80.csv CACHE.json.gz [CACHE.json.gz ...]

and for an AMD GPU the HIP version of the kernel (``convolution.cu.hip`` in the same folder) with a
``gfx`` architecture (hipcc). AMD tables count the spill bytes a thread stores and reloads in the
compiled assembly and hold the scratch it keeps them in (`spill_kept_bytes`, the backend's ScratchSize per lane).
AMD tables hold how often a thread waits for its loads (`load_waits_per_thread`), read in hipcc's assembly,
empty where a loop loads without FMAs (the shared-memory copy's) and so its trips are unknown.
With ``--sass`` an NVIDIA table holds it too, with the instructions a thread issues (`instructions_per_thread`),
read in the SASS of each cubin (`pystencils_perf.adapters.sass`, which needs nvdisasm: a CUDA toolkit's, or
``pip install nvidia-cuda-nvdisasm``); the committed NVIDIA tables do not (README of this folder: why). Such
tables of the shared-memory rows (``--shmem``), and those of ``--shared-loads``, which keeps this count alone of the
SASS's, end with the 4-byte words a thread loads from shared memory (`shared_load_words_per_thread`): a compiler
may reload what it cannot keep in registers.

Kernel Tuner compiles the kernel once per configuration, every tunable parameter (the block size
among them) a ``-D`` macro, so each launch of the caches ran its own code with its own registers:
a 4x4 tile with read_only needs 192-255 of them, and then few warps fit on an SM. The description
(`validation/a100_convolution/convolution.py`) cannot know this; the validations read this table
through a `perf_launch_resources` plugin (`convolution_summary.CompiledRegisters`), as a user's
source would be compiled per launch (a CUDA description with `source` and `block_size_names`).

The kernel is compiled here for its compiler report only: the source is not in this repository
(its project grants no licence to copy it), only the report's numbers are. Every configuration
(block size, tile, read_only) of the given caches with use_shmem 0, use_padding 0, use_cmem 1 and
a 15x15 filter is compiled with pystencils-perf's own compiler driver (nvcc if on PATH, else the
NVRTC wheels), in parallel. The measured binaries were built by the caches' authors with their
compiler of 2023, so these counts are a stand-in for theirs: the caches' launches that failed
(``RuntimeFailedConfig``, too many resources) check them (see the README of this folder).
``--shmem`` compiles the shared-memory rows instead (use_padding tuned too); one that does not compile is left
out of the table, as Kernel Tuner records it (``CompilationFailedConfig``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import gzip
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date
from pathlib import Path

from pystencils_perf.adapters import cuda_compiler, hip_compiler, sass
from pystencils_perf.devices import get_device
from pystencils_perf.errors import PerfError
from pystencils_perf.resources import ResourceUsage
from pystencils_perf.outputs import replacing_file
from pystencils_perf.tempcache import use_temporary_pystencils_cache

#: the kernel's mangled name: the source declares it without extern "C"
FUNCTION = "_Z18convolution_kernelPfS_S_"
FIXED = {"use_shmem": 0, "use_padding": 0, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
KEY = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only")
#: with --shmem: the caches' shared-memory rows, where use_padding is tuned too
SHMEM_FIXED = {"use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
SHMEM_KEY = (*KEY, "use_padding")
RESOURCE_COLUMNS = ("registers", "spill_store_bytes", "spill_load_bytes")
#: AMD tables only: the scratch a thread keeps its spills in; AMD tables, and NVIDIA ones with --sass, end with how
#: often a thread's warp waits for its outstanding loads (`hip_compiler.assembly_counts`, `sass.sass_counts`)
AMD_COLUMNS = ("spill_kept_bytes",)
#: NVIDIA tables with --sass: the instructions a thread issues, counted in the SASS (`sass.sass_counts`)
SASS_COLUMNS = ("instructions_per_thread",)
#: --shmem tables that read the code (AMD; NVIDIA with --sass or --shared-loads): the 4-byte words a thread loads
#: from shared memory
SHARED_COLUMNS = ("shared_load_words_per_thread",)
#: how a configuration's `ResourceUsage` gives each column past RESOURCE_COLUMNS
EXTRA_VALUES = {
    "spill_kept_bytes": lambda r: r.spill_footprint_bytes,
    "instructions_per_thread": lambda r: f"{r.instructions_per_thread:.6g}",
    "shared_load_words_per_thread": lambda r: f"{r.shared_load_words_per_thread:.6g}",
    # empty where the code's waits per thread are unknown (`load_waits_per_thread`)
    "load_waits_per_thread": lambda r: "" if r.load_waits_per_thread is None else f"{r.load_waits_per_thread:.6g}",
}
FILTER_TAPS = 15 * 15


def configurations(caches: list[Path], fixed: dict = FIXED, key: tuple[str, ...] = KEY) -> list[tuple[int, ...]]:
    """The distinct values of `key` (block size, tile, read_only) of the caches' rows with `fixed`, timed or
    failed: a failed launch is compiled too, so that its registers can be checked against the failure."""
    found = set()
    for path in caches:
        with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as fh:
            for entry in json.load(fh)["cache"].values():
                if has_fixed(entry, fixed):
                    found.add(tuple(int(entry[k]) for k in key))
    return sorted(found)


#: what a cache that does not tune these parameters always does: Kernel Tuner's own convolution (benchmark_hub's
#: ``currently_unused/kernels/convolution.cu``) stages every tile in shared memory and keeps the filter in constant
#: memory, and its caches name neither
UNTUNED = {"use_shmem": 1, "use_cmem": 1}


def has_fixed(entry: dict, fixed: dict) -> bool:
    """Whether a cache row has the `fixed` values (a parameter its cache does not tune has its `UNTUNED` value)."""
    return all(entry.get(k, UNTUNED.get(k)) == v for k, v in fixed.items())


@functools.cache
def read_table(path: Path) -> dict[tuple[int, ...], ResourceUsage]:
    """A table this script wrote, by (block_size_x, block_size_y, tile_size_x, tile_size_y, read_only); its first
    line (a comment) names the compiler, its name the architecture (``convolution15_registers_<arch>.csv``)."""
    lines = path.read_text().splitlines()
    compiler = lines[0].split(" by ", 1)[1].split(" on ", 1)[0]
    arch = path.stem.split("_registers_", 1)[1]
    header = lines[1].split(",")
    key = header[: header.index(RESOURCE_COLUMNS[0])]  # KEY, or SHMEM_KEY in a --shmem table
    rows = {}
    for line in lines[2:]:
        row = {name: float(value) if value else None for name, value in zip(header, line.split(","))}
        kept = row.get("spill_kept_bytes")
        rows[tuple(int(row[k]) for k in key)] = ResourceUsage(
            arch,
            int(row["registers"]),
            int(row["spill_store_bytes"]),
            int(row["spill_load_bytes"]),
            0,
            compiler,
            spill_kept_bytes=None if kept is None else int(kept),
            load_waits_per_thread=row.get("load_waits_per_thread"),
            instructions_per_thread=row.get("instructions_per_thread"),
            shared_load_words_per_thread=row.get("shared_load_words_per_thread"),
        )
    return rows


def trips_per_thread(counts, tile_points: int) -> float:
    """How often a thread runs its code: once, or where the compiler kept the filter loop rolled (it unrolls the
    15 x 15 taps only so far), the thread's FMAs (225 per tile point) over the FMAs of one trip."""
    if not counts.looped:
        return 1.0
    if not counts.fma_instructions:
        raise SystemExit(
            "the compiled kernel has a loop but no FMA to count its trips by: its counts per thread are unknown"
        )
    return tile_points * FILTER_TAPS / counts.fma_instructions


def load_waits_per_thread(counts, trips: float) -> float | None:
    """How often a thread waits for its loads: the code's waits times its trips, or None (unknown, the model then
    counts them itself) where a loop loads without FMAs, as the shared-memory copy does: its trips depend on the
    thread's index, and the FMAs count only the filter loop's."""
    return None if counts.loop_loads_without_fma else counts.waits * trips


def launch_fails(registers: int, threads: int, device) -> bool:
    """Whether a block of `threads` needs more registers than an SM of `device` has (allocated per warp):
    CUDA refuses that launch with too many resources requested."""
    return device.blocks_by_registers(registers, threads) == 0


def check(table: Path, caches: list[Path], device, fixed: dict = FIXED, key: tuple[str, ...] = KEY, only=None) -> str:
    """How the table's registers agree with the launches each cache reports as failed at run time, on a GPU
    with `device`'s register file (the A100's for sm_80 and sm_86: 64 K registers per SM in units of 256); a
    configuration the table lacks (it did not compile) counts as failing. `only`: the configurations compiled
    (``--configurations``), where not every one of the caches' was."""
    rows = read_table(table)
    lines = []
    for path in caches:
        failed = ran = failed_predicted = ran_predicted = 0
        with gzip.open(path, "rt") as fh:
            for entry in json.load(fh)["cache"].values():
                if not has_fixed(entry, fixed):
                    continue
                config = tuple(int(entry[k]) for k in key)
                if only is not None and config not in only:
                    continue
                fails = config not in rows or launch_fails(
                    rows[config].registers_per_thread, config[0] * config[1], device
                )
                if entry["time"] == "RuntimeFailedConfig":
                    failed, failed_predicted = failed + 1, failed_predicted + fails
                elif isinstance(entry["time"], (int, float)):
                    ran, ran_predicted = ran + 1, ran_predicted + fails
        lines.append(
            f"{path.name}: {failed_predicted} of {failed} launches that failed at run time need more "
            f"registers than an SM has; {ran_predicted} of {ran} that ran would too"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    use_temporary_pystencils_cache()  # the compiler's reports: never into the home directory
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the kernel's CUDA file (see above)")
    parser.add_argument("arch", help="sm_XY")
    parser.add_argument("out", type=Path, help="the CSV to write")
    parser.add_argument("caches", type=Path, nargs="+", help="Kernel Tuner cache files whose configurations to compile")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--cubins",
        type=Path,
        metavar="DIR",
        help="NVIDIA: keep each configuration's cubin in DIR as BX_BY_TX_TY_RO.cubin, "
        "the binaries validation/hopper/convolution_on_gpu.py times",
    )
    parser.add_argument(
        "--tiles",
        metavar="TXxTY,...",
        help="only configurations with these tiles (tile_size_x x tile_size_y), e.g. 1x1,2x4: "
        "the table of a long compile in parts",
    )
    parser.add_argument(
        "--sass",
        action="store_true",
        help="NVIDIA: also read each launch's instructions and waits for its loads in its SASS "
        "(nvdisasm), which the throughput model then uses; a study, not the committed tables "
        "(see the README of this folder)",
    )
    parser.add_argument(
        "--shared-loads",
        action="store_true",
        help="NVIDIA, with --shmem: read in each launch's SASS (nvdisasm) the words a thread loads from shared "
        "memory, and keep them alone of its counts (--sass keeps them too)",
    )
    parser.add_argument(
        "--shmem",
        action="store_true",
        help="the caches' shared-memory rows (use_shmem 1, use_padding tuned): a table keyed by use_padding too, "
        "cubins named BX_BY_TX_TY_RO_PAD",
    )
    parser.add_argument(
        "--configurations",
        type=Path,
        metavar="CSV",
        help="only the configurations of this CSV (columns named as the key: block_size_x, ..., read_only"
        "[, use_padding]), e.g. a sample chosen before timing",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compile nothing: compare the table `out` with the caches' launches that failed",
    )
    parser.add_argument(
        "--function",
        default=FUNCTION,
        help=f"the kernel's name as ptxas reports it (default {FUNCTION}, the source's C++ name; Kernel Tuner's own "
        'convolution.cu declares it extern "C": convolution_kernel)',
    )
    parser.add_argument(
        "--nvrtc",
        action="store_true",
        help="NVIDIA: compile with the NVRTC wheels (`nvidia-cuda-nvrtc-cu11`: NVRTC 11.8 and its ptxas), an older "
        "compiler than nvcc 13, nearer to the one the caches' binaries were built with",
    )
    args = parser.parse_args(argv)
    fixed, key = (SHMEM_FIXED, SHMEM_KEY) if args.shmem else (FIXED, KEY)
    chosen_configs = None
    if args.configurations:
        with open(args.configurations, newline="") as fh:
            chosen_configs = {tuple(int(row[k]) for k in key) for row in csv.DictReader(fh)}
    if args.check:
        print(check(args.out, args.caches, get_device("A100-PCIe-40GB"), fixed, key, chosen_configs))
        return 0
    driver = hip_compiler if args.arch.startswith("gfx") else cuda_compiler
    if args.nvrtc and driver is cuda_compiler:
        chosen = cuda_compiler.nvrtc_for(args.arch)
    else:
        chosen = driver.compiler_for(args.arch if driver is hip_compiler else args.arch[3:4] + "." + args.arch[4:])
    if chosen is None or chosen[1] != args.arch:
        print(f"no installed compiler builds {args.arch}", file=sys.stderr)
        return 2
    compiler, arch = chosen
    text = args.source.read_text()

    amd = driver is hip_compiler
    if args.sass and amd:
        print("--sass needs an sm_XY architecture (AMD tables always read the assembly)", file=sys.stderr)
        return 2
    if args.shared_loads and not args.shmem:
        print("--shared-loads needs --shmem (the shared-memory rows)", file=sys.stderr)
        return 2
    reads_sass = (args.sass or args.shared_loads) and not amd
    nvdisasm = sass.find_nvdisasm() if reads_sass else None
    if reads_sass and nvdisasm is None:
        print("reading SASS needs nvdisasm (a CUDA toolkit's, or pip install nvidia-cuda-nvdisasm)", file=sys.stderr)
        return 2

    function = args.function

    def compiled(config):
        macros = {**fixed, **dict(zip(key, config))}
        source = "".join(f"#define {k} {v}\n" for k, v in macros.items()) + text
        if amd:
            usage, counts = hip_compiler.compile_code(source, function, arch, compiler)
            trips = trips_per_thread(counts, config[2] * config[3])
            return replace(
                usage,
                spill_store_bytes=round(counts.spill_store_bytes * trips),
                spill_load_bytes=round(counts.spill_load_bytes * trips),
                load_waits_per_thread=load_waits_per_thread(counts, trips),
                shared_load_words_per_thread=counts.shared_load_words * trips,
            )
        with (
            contextlib.nullcontext(args.cubins)
            if args.cubins
            else tempfile.TemporaryDirectory(prefix="convolution-cubin-") as folder
        ):
            cubin = Path(folder) / ("_".join(map(str, config)) + ".cubin")
            try:
                report = compiler.ptxas_report(source, function, arch, (), cubin=cubin)
            except PerfError as error:  # e.g. a shared tile over the 48 KiB a static array may take
                if not args.shmem:
                    raise
                print(f"{'_'.join(map(str, config))}: {error}", file=sys.stderr)
                return None  # no row: Kernel Tuner's CompilationFailedConfig
            counts = sass.cubin_counts(cubin, function, nvdisasm) if nvdisasm else None
        usage = cuda_compiler.parse_resource_usage(report, function, arch, compiler.name)
        if counts is None:
            return usage
        trips = trips_per_thread(counts, config[2] * config[3])
        return replace(
            usage,
            load_waits_per_thread=load_waits_per_thread(counts, trips),
            instructions_per_thread=counts.instructions * trips,
            shared_load_words_per_thread=counts.shared_load_words * trips,
        )

    if args.cubins:
        if amd:
            print("--cubins needs an sm_XY architecture", file=sys.stderr)
            return 2
        args.cubins.mkdir(parents=True, exist_ok=True)
    configs = configurations(args.caches, fixed, key)
    if chosen_configs is not None:
        configs = [c for c in configs if c in chosen_configs]
    if args.tiles:
        tiles = {tuple(int(n) for n in tile.split("x")) for tile in args.tiles.split(",")}
        configs = [c for c in configs if (c[2], c[3]) in tiles]
    try:
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(compiled, configs))
    except PerfError as error:  # e.g. an empty source, whose binaries hold no kernel
        print(f"{args.source}: {error}", file=sys.stderr)
        return 2
    with replacing_file(args.out) as fh:
        fh.write(
            f"# {args.source.name} compiled for {arch} by {compiler.name} on {date.today().isoformat()} "
            f"(validation/data/external/compile_convolution_registers.py{' --sass' if args.sass else ''}"
            f"{' --shared-loads' if args.shared_loads and not args.sass else ''}); "
            f"configurations of "
            f"{', '.join(p.name for p in args.caches)}\n"
        )
        writer = csv.writer(fh, lineterminator="\n")
        # the assembly's counts: AMD always, NVIDIA with --sass (the shared loads alone with --shared-loads)
        extra = ((AMD_COLUMNS if amd else SASS_COLUMNS) + ("load_waits_per_thread",)) if amd or args.sass else ()
        extra += SHARED_COLUMNS if args.shmem and (extra or args.shared_loads) else ()
        writer.writerow(key + RESOURCE_COLUMNS + extra)
        for config, r in zip(configs, results):
            if r is None:
                continue
            writer.writerow(
                (*config, r.registers_per_thread, r.spill_store_bytes, r.spill_load_bytes)
                + tuple(EXTRA_VALUES[column](r) for column in extra)
            )
    failed = sum(r is None for r in results)
    print(
        f"{len(configs) - failed} configurations written to {args.out}"
        + (f", {failed} failed to compile" if failed else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
