"""Time the convolution of the Kernel Tuner caches on this machine's GPU and write a Kernel Tuner cache of our own.

    python3 validation/hopper/convolution_on_gpu.py CUBIN_DIR OUT.json.gz [--seconds 330]
    python3 validation/hopper/convolution_on_gpu.py CUBIN_DIR OUT.json.gz --shmem --sample SAMPLE.csv

The binaries come from `validation/data/external/compile_convolution_registers.py ... sm_90 ... --cubins
CUBIN_DIR`: one per configuration (block_size_x, block_size_y, tile_size_x, tile_size_y, read_only; use_shmem
0, use_padding 0, use_cmem 1, 15x15 filter), compiled from the caches' own source, so every launch runs the
code Kernel Tuner would have built for it. Each one is launched as Kernel Tuner launches it (grid =
ceil(4096 / (block * tile)) per dimension, arguments output, input, filter, the weights in the constant
`d_filter`), checked against a float64 reference on fresh random data (output poisoned with NaN first), and
timed like Kernel Tuner's default runner: one CUDA-event pair per launch, `time` the mean of `times` in ms.

With ``--shmem`` the binaries are the shared-memory rows (``compile_convolution_registers.py --shmem``, named
BX_BY_TX_TY_RO_PAD: use_shmem 1, use_padding tuned); ``--sample`` names the configurations chosen before
timing (`convolution_shmem_sample.py`), so that one without a binary (its shared tile over the 48 KiB a
static array may take) is recorded as ``CompilationFailedConfig``, as Kernel Tuner records it.

Two sweeps, each in its own random order: the first with 32 timed launches per configuration (the
caches' count), the second with 10, written beside the first as ``*_rerun.json.gz`` for the run-to-run
spread. A launch the driver refuses is recorded as ``RuntimeFailedConfig``, as Kernel Tuner does. When
`--seconds` have passed, or on Ctrl-C, the sweep stops and what was timed is written. Needs cupy and
numpy only, so it runs on the lent GPU image without wheels.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import cupy as cp
import numpy as np

IMAGE = 4096
FILTER = 15
INPUT = IMAGE + FILTER - 1
#: the source's load guard admits rows and columns up to INPUT - 1 and then adds the filter offset, so
#: guarded tiles read up to FILTER - 1 rows past the input: those rows are allocated (and random)
INPUT_ROWS_ALLOCATED = INPUT + FILTER
FUNCTION = "_Z18convolution_kernelPfS_S_"


@dataclass(frozen=True)
class Layout:
    """The tuned parameters a binary's name gives (`key`) and those every binary shares (`fixed`)."""

    key: tuple[str, ...]
    fixed: dict


GLOBAL = Layout(
    ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only"),
    {"use_padding": 0, "use_shmem": 0, "use_cmem": 1, "filter_height": FILTER, "filter_width": FILTER},
)
SHARED = Layout(
    ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only", "use_padding"),
    {"use_shmem": 1, "use_cmem": 1, "filter_height": FILTER, "filter_width": FILTER},
)
#: ‖out - ref‖ / ‖ref‖ of a right float32 result: 225 products summed in another order stay near 1e-7
TOLERANCE = 1e-5


def configurations(cubin_dir: Path, sample: Path | None, layout: Layout) -> dict[tuple[int, ...], Path | None]:
    """The configurations to time, by `layout.key`: those of `sample` (None where `cubin_dir` has no binary of
    it), or else those whose binaries `cubin_dir` holds."""
    found = {tuple(int(n) for n in path.stem.split("_")): path for path in sorted(cubin_dir.glob("*.cubin"))}
    if any(len(config) != len(layout.key) for config in found):
        raise SystemExit(f"{cubin_dir}: binaries not named {'_'.join(layout.key)}.cubin (--shmem?)")
    if sample is not None:
        with open(sample, newline="") as fh:
            return {c: found.get(c) for c in (tuple(int(row[k]) for k in layout.key) for row in csv.DictReader(fh))}
    if not found:
        raise SystemExit(f"no .cubin files in {cubin_dir}")
    return found


class Problem:
    """Random input and weights on the GPU and the float64 reference output."""

    def __init__(self, rng: np.random.Generator):
        self.input = cp.asarray(rng.uniform(-1, 1, (INPUT_ROWS_ALLOCATED, INPUT)).astype(np.float32))
        self.weights = cp.asarray(rng.uniform(-1, 1, (FILTER, FILTER)).astype(np.float32))
        self.output = cp.empty((IMAGE, IMAGE), np.float32)
        reference = cp.zeros((IMAGE, IMAGE), np.float64)
        wide = self.input.astype(np.float64)
        for i in range(FILTER):
            for j in range(FILTER):
                reference += float(self.weights[i, j]) * wide[i : i + IMAGE, j : j + IMAGE]
        self.reference = reference
        self.reference_norm = float(cp.linalg.norm(reference))

    def relative_error(self) -> float:
        """‖out - ref‖ / ‖ref‖, NaN where an output was left unwritten."""
        return float(cp.linalg.norm(self.output.astype(np.float64) - self.reference)) / self.reference_norm


def time_configuration(
    config: tuple[int, ...],
    cubin: Path | None,
    problem: Problem,
    iterations: int,
    layout: Layout,
    around_timed=contextlib.nullcontext,
) -> dict:
    """One cache entry: the parameters, then `time` and `times` (ms), or the reason it has none. The timed launches
    run inside `around_timed()` (a profiler's range, say), the checked launch before them outside it."""
    bx, by, tx, ty = config[:4]
    entry = {**dict(zip(layout.key, config)), **layout.fixed}
    if cubin is None:
        entry["time"] = "CompilationFailedConfig"
        return entry
    loading = time.perf_counter()
    module = cp.RawModule(path=str(cubin))
    kernel = module.get_function(FUNCTION)
    constant = module.get_global("d_filter")
    cp.ndarray((FILTER * FILTER,), np.float32, constant)[...] = problem.weights.ravel()
    # Kernel Tuner's simulation mode charges these three times to a search's budget (ms)
    entry["compile_time"] = 1000 * (time.perf_counter() - loading)  # the cubin's load: nvcc ran ahead, elsewhere
    entry["verification_time"] = entry["benchmark_time"] = 0.0
    entry["timestamp"] = datetime.now(timezone.utc).isoformat()
    grid, block = (-(-IMAGE // (bx * tx)), -(-IMAGE // (by * ty))), (bx, by, 1)
    args = (problem.output, problem.input, problem.weights)
    entry["num_regs"] = kernel.num_regs  # Kernel Tuner's RegisterObserver calls it so
    entry["local_bytes_per_thread"] = kernel.local_size_bytes
    problem.output.fill(np.nan)
    try:
        kernel(grid, block, args)
        cp.cuda.Device().synchronize()
    except cp.cuda.driver.CUDADriverError as error:
        entry["time"] = "RuntimeFailedConfig"
        entry["error"] = str(error)
        return entry
    checking = time.perf_counter()
    error = problem.relative_error()
    entry["verification_time"] = 1000 * (time.perf_counter() - checking)
    entry["relative_error"] = error
    if not error <= TOLERANCE:
        entry["time"] = "WrongResult"
        return entry
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    with around_timed():
        for _ in range(iterations):
            start.record()
            kernel(grid, block, args)
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
    entry["times"] = times
    entry["benchmark_time"] = sum(times)
    entry["time"] = sum(times) / len(times)
    return entry


def cache_key(entry: dict, layout: Layout) -> str:
    """Kernel Tuner's key: the tunable parameters' values, in the order of `tune_params_keys`."""
    return ",".join(str(entry[k]) for k in (*layout.key, *layout.fixed))


def write_cache(path: Path, entries: list[dict], provenance: dict, layout: Layout) -> None:
    """A Kernel Tuner cache file (gzipped JSON) of `entries`, replacing `path` whole."""
    tune_params = {k: sorted({e[k] for e in entries}) for k in layout.key} | {k: [v] for k, v in layout.fixed.items()}
    cache = {
        "device_name": provenance["device"],
        "kernel_name": "convolution_kernel",
        "problem_size": [IMAGE, IMAGE],
        "tune_params_keys": [*layout.key, *layout.fixed],
        "tune_params": tune_params,
        "objective": "time",
        "provenance": provenance,
        "cache": {cache_key(e, layout): e for e in sorted(entries, key=lambda e: tuple(e[k] for k in layout.key))},
    }
    partial = path.with_name(path.name + ".partial")
    with gzip.open(partial, "wt") as fh:
        json.dump(cache, fh)
    os.replace(partial, path)


def sweep(
    configs: dict, problem: Problem, iterations: int, order_seed: int, deadline: float, layout: Layout
) -> list[dict]:
    """Every configuration once, in a seeded random order, until `deadline` (time.monotonic) or Ctrl-C."""
    entries = []
    order = np.random.default_rng(order_seed).permutation(len(configs))
    keys = list(configs)
    try:
        for n in order:
            if time.monotonic() > deadline:
                print(f"deadline reached after {len(entries)} of {len(configs)} configurations", flush=True)
                break
            entries.append(time_configuration(keys[n], configs[keys[n]], problem, iterations, layout))
    except KeyboardInterrupt:
        print(f"interrupted after {len(entries)} of {len(configs)} configurations", flush=True)
    return entries


def nvidia_smi(query: str) -> str:
    return subprocess.run(
        ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True, text=True
    ).stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cubins", type=Path, help="folder of BX_BY_TX_TY_RO.cubin")
    parser.add_argument("out", type=Path, help="the cache to write (.json.gz); the rerun goes beside it")
    parser.add_argument("--seconds", type=float, default=330.0, help="stop timing after this long (both sweeps)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--shmem", action="store_true", help="the shared-memory rows: binaries BX_BY_TX_TY_RO_PAD")
    parser.add_argument("--sample", type=Path, help="the configurations chosen before timing (a CSV by name)")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.seconds
    layout = SHARED if args.shmem else GLOBAL
    configs = configurations(args.cubins, args.sample, layout)
    provenance = {
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "driver": nvidia_smi("driver_version"),
        "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
        "cupy": cp.__version__,
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "clocks_before_mhz": nvidia_smi("clocks.sm,clocks.mem"),
        "command": " ".join(sys.argv),
        "binaries": "validation/data/external/compile_convolution_registers.py --cubins (nvcc, sm_90)"
        + (" --shmem" if args.shmem else ""),
        "timing": "one CUDA-event pair per launch after an untimed checked launch; time = mean of times (ms)",
    }
    print(provenance, flush=True)
    problem = Problem(np.random.default_rng(args.seed))
    for iterations, order_seed, path in (
        (32, args.seed, args.out),
        (10, args.seed + 1, args.out.with_name(args.out.name.replace(".json", "_rerun.json"))),
    ):
        entries = sweep(configs, problem, iterations, order_seed, deadline, layout)
        provenance["clocks_after_mhz"] = nvidia_smi("clocks.sm,clocks.mem")
        timed = [e["time"] for e in entries if isinstance(e["time"], float)]
        write_cache(path, entries, {**provenance, "iterations": iterations}, layout)
        failed = sorted({e["time"] for e in entries if not isinstance(e["time"], float)})
        print(
            f"{path.name}: {len(timed)} timed of {len(entries)} ({', '.join(failed) or 'none failed'}); "
            f"best {min(timed, default=float('nan')):.4f} ms, median {float(np.median(timed or [np.nan])):.4f} ms",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
