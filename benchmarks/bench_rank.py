"""Speed and memory targets of the estimator (issue: "rank a whole space in about a second").

    python benchmarks/bench_rank.py [--repeat N] [--skip-scaling] [--skip-slow] [--scaling-tiles]

Table 1, per candidate space: wall time of ``pystencils_perf.rank`` with the default
model (harvest included, kernel generation excluded; median of N runs) with every core, that time per
candidate, backend, the process's peak resident memory, and the wall time over the
limiter model's, both in one process (at most `DEFAULT_OVER_LIMITERS_TARGET`); the exit status is
non-zero when a target is missed. Table 2: cost of one candidate against grid
size and threads per wave (V100: 80 SMs, H100: 132 SMs, 2048 threads each),
for both footprint backends; an ISL candidate that needs more than
``--isl-limit`` seconds is stopped, and larger grids are not tried.

Table 3 (issue 55; `--skip-slow` leaves it out), larger spaces, each run once, the first run in a fresh process
(each row in a process of its own, ``--row KEY``, with a cache folder of its own, as the issue's targets are
stated; the product's bytecode written first, as an installed package has it: `compile_bytecode`): wall time,
CPU time of that process and its children, its peak memory (the larger of its own and its children's:
`usage.cpu_and_peak`), candidates, wall time per candidate and the target (`FIRST_RUN_TARGETS_S`; peak memory at
most 1 GiB everywhere). A row whose data file is missing is printed as skipped and does not fail.
Rows:

* the A100 15x15 convolution SPEC without shared memory over every configuration of Kernel Tuner's A100
  cache (`replay_candidates` with every core; reading the cache and the SPEC excluded);
* KTT's shared-memory convolution SPEC over every configuration of the RTX 2080 Ti counters (the same);
* lbmpy's D3Q27 cumulant and the two Allen-Cahn kernels on 256^3, `pp.rank(kernel, "A100")` with the
  default space, 256 threads for the hydro kernel (harvest and register counts included, lbmpy's kernel
  generation excluded, as in table 1);
* what ``pystencils_perf.create_kernel`` of the README's quick start costs over ``pystencils.create_kernel``
  (`quick_start.py`: registers compiled and candidates estimated afresh, lazy imports included), and the same
  again in a new process that finds what the first kept in their cache folder (compiler reports, estimates: a
  script run again);
* ``pystencils-perf tune SPEC --device DEV --replay CACHE --budget 10`` end to end in a fresh subprocess, for
  each cache `bench_tune.caches()` finds (DEV: the cache's GPU) and for the shared-memory data
  (`SHARED_MEMORY_REPLAYS`: the A100's whole cache, the H200's sample, KTT's RTX 2080 Ti export), with a fresh
  PYSTENCILS_PERF_TUNING_DIR;
  "first measurement" is when the first replayed measurement started, from the start of the call (target
  `FIRST_MEASUREMENT_TARGET_S`).

`--scaling-tiles` adds two tables for the A100 convolution SPEC, serial (``jobs=1``), after one warm-up call:
the wall time per candidate against the tile size for `TILE_BLOCKS`, and against the number of candidates
(blocks of the cache, in a fixed random order) for tiles 1x1 and 4x4. Harvesting is timed apart.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-bench-")

import pystencils_perf as pp  # noqa: E402
from limits import call_with_limit  # noqa: E402
from pystencils_perf.catalog import lbm, star_3d  # noqa: E402
from pystencils_perf.estimate.volumes import occupancy  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.tune.replay import replay_candidates  # noqa: E402
from pystencils_perf.tempcache import CACHE_ENV  # noqa: E402
from usage import cpu_and_peak, own_peak_bytes  # noqa: E402

PEAK_MEMORY_TARGET_BYTES = 1 << 30
#: the default model's ranking may cost at most this much more than the limiters' (issue 26: the throughput model
#: became the default at no more than 1.5x the ranking cost of the limiter model it replaced)
DEFAULT_OVER_LIMITERS_TARGET = 1.5
SCALING_GRIDS = (16, 32, 64, 128, 256, 512, 1024)

ROOT = Path(__file__).resolve().parents[1]
A100_SPEC = ROOT / "validation/a100_convolution/convolution.py"
A100_CACHE = ROOT / "validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz"
KTT_SPEC = ROOT / "validation/rtx2080ti_convolution/convolution_shmem.py"
KTT_CSV = ROOT / "validation/data/external/rtx2080ti_convolution15_ktt_counters.csv"
#: the repository's caches with shared memory that `tune --replay` replays in table 3: (SPEC, cache, device, label)
SHARED_MEMORY_REPLAYS = (
    (ROOT / "validation/a100_convolution/convolution_any.py", A100_CACHE, "A100-PCIe-40GB", "A100, whole cache"),
    (
        ROOT / "validation/a100_convolution/convolution_shmem.py",
        ROOT / "validation/hopper/data/h200/convolution15_shmem_kernel_tuner_cache.json.gz",
        "H200",
        "H200, shared memory",
    ),
    (KTT_SPEC, KTT_CSV, "RTX-2080-Ti", "RTX 2080 Ti, KTT"),
)
#: wall-time targets of table 3, seconds
FIRST_RUN_TARGETS_S = {"a100 cache": 10.0, "ktt csv": 20.0, "lbm": 5.0, "tune": 30.0, "create_kernel": 0.5}
#: a tune call's first measurement starts at most this long after the call (seconds)
FIRST_MEASUREMENT_TARGET_S = 10.0
LBM_DOMAIN = (256, 256, 256)
#: the blocks of the tile-size table (x, y)
TILE_BLOCKS = (
    (16, 1),
    (32, 4),
    (48, 2),
    (64, 1),
    (64, 4),
    (128, 1),
    (128, 2),
    (256, 1),
    (32, 8),
    (16, 16),
    (144, 4),
    (96, 2),
)
CANDIDATE_COUNTS = (6, 12, 24, 48)


def median_wall_s(kernel, repeat, **kwargs) -> float:
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        pp.rank(kernel, "V100", **kwargs)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def time_space(name, kernel, target_s, repeat, **kwargs):
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        ranking = pp.rank(kernel, "V100", **kwargs)
        walls.append(time.perf_counter() - start)
    peak = own_peak_bytes()
    wall = statistics.median(walls)
    # the models' cost compared in one process each: worker processes' start-up would blur it
    over_limiters = median_wall_s(kernel, repeat, jobs=1, **kwargs) / median_wall_s(
        kernel, repeat, model="limiters", jobs=1, **kwargs
    )
    ok = wall <= target_s and peak <= PEAK_MEMORY_TARGET_BYTES and over_limiters <= DEFAULT_OVER_LIMITERS_TARGET
    return {
        "space": name,
        "candidates": len(ranking.candidates),
        "wall_s": wall,
        "per_candidate_ms": 1e3 * wall / len(ranking.candidates),
        "backend": kwargs.get("backend", "auto"),
        "peak_rss_MiB": peak / 2**20,
        "target_s": target_s,
        "over_limiters": over_limiters,
        "ok": ok,
    }


def _time_one_candidate(model, device, backend, block):
    start = time.perf_counter()
    pp.rank(model, device, blocks=[block], folds=[(1, 1, 1)], backend=backend)
    return time.perf_counter() - start


def first_run(name, target_s, function, candidates) -> dict:
    """Time `function()` once; `candidates(result)` counts what it ranked."""
    cpu_before, _ = cpu_and_peak()
    start = time.perf_counter()
    result = function()
    wall_s = time.perf_counter() - start
    cpu_after, peak = cpu_and_peak()
    return run_row(name, target_s, wall_s, cpu_after - cpu_before, peak, candidates(result))


def run_row(name, target_s, wall_s, cpu_s, peak_bytes, candidates, note="") -> dict:
    ok = wall_s <= target_s and peak_bytes <= PEAK_MEMORY_TARGET_BYTES
    return {
        "row": name,
        "candidates": candidates,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "peak_rss_MiB": peak_bytes / 2**20,
        "target_s": target_s,
        "ok": ok,
        "note": note,
    }


def skipped_row(name, target_s, why) -> dict:
    return {"row": name, "target_s": target_s, "ok": True, "skipped": why}


def replay_row(name, target_s, spec_path, data_path, device) -> dict:
    if not data_path.exists():
        return skipped_row(name, target_s, "skipped: cache not found")
    spec, data = load_tunable_spec(spec_path), read_kernel_tuner(data_path)
    return first_run(
        name, target_s, lambda: replay_candidates(data, spec, device, jobs=None), lambda space: len(space.candidates)
    )


#: `pystencils-perf` with the replay's first measurement stamped (seconds since the epoch) on stderr, and at exit the
#: peak memory of its process and its children (`usage.cpu_and_peak`)
FIRST_MEASUREMENT_PROBE = """
import atexit, sys, time
sys.path.insert(0, "benchmarks")
from usage import cpu_and_peak
atexit.register(lambda: print(f"peak bytes {cpu_and_peak()[1]}", file=sys.stderr))
from pystencils_perf.tune.replay import ReplaySource
from pystencils_perf.cli import main
time_ms = ReplaySource.time_ms
def timed(self, candidate):
    if not getattr(timed, "seen", False):
        timed.seen = True
        print(f"first measurement at {time.time():.3f}", file=sys.stderr)
    return time_ms(self, candidate)
ReplaySource.time_ms = timed
sys.exit(main(sys.argv[1:]))
"""


def tune_row(cache: Path, device: str, spec: Path = A100_SPEC, label: str | None = None) -> dict:
    """`pystencils-perf tune spec --replay cache --budget 10` in a subprocess: its CPU time from wait4, its peak
    memory as the probe reports it; `label` names the row (by default the device)."""
    command = [
        sys.executable,
        "-c",
        FIRST_MEASUREMENT_PROBE,
        "tune",
        str(spec.relative_to(ROOT)),
        "--device",
        device,
        "--replay",
        str(cache),
        "--budget",
        "10",
    ]
    name = f"tune --replay budget 10, {label or device}"
    with tempfile.TemporaryDirectory(prefix="bench-rank-tuning-") as records, tempfile.TemporaryFile() as output:
        env = {**os.environ, "PYSTENCILS_PERF_TUNING_DIR": records}
        start, started_at = time.perf_counter(), time.time()
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall_s = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode(errors="replace")
    if child.returncode:
        sys.stderr.write(f"{' '.join(command)} failed ({child.returncode}):\n{text}\n")
        return {**run_row(name, FIRST_RUN_TARGETS_S["tune"], wall_s, 0.0, 0, 0), "ok": False, "note": "FAILED"}
    candidates = int(re.search(r"(\d+) candidates, \d+ rejected", text)[1])  # the title line
    first_s = float(re.search(r"first measurement at ([0-9.]+)", text)[1]) - started_at
    row = run_row(
        name,
        FIRST_RUN_TARGETS_S["tune"],
        wall_s,
        usage.ru_utime + usage.ru_stime,
        int(re.search(r"peak bytes (\d+)", text)[1]),
        candidates,
        f"first measurement after {first_s:.1f} s (<= {FIRST_MEASUREMENT_TARGET_S:g})",
    )
    return {**row, "ok": row["ok"] and first_s <= FIRST_MEASUREMENT_TARGET_S}


#: table 3's rows that `--row KEY` computes in a process of its own: (name, target key) by KEY
FRESH_PROCESS_ROWS = {
    "a100": ("15x15 conv, no shmem, all tiles, A100", "a100 cache"),
    "ktt": ("KTT shmem conv, all tiles, RTX 2080 Ti", "ktt csv"),
    "d3q27": ("D3Q27 cumulant 256^3, A100", "lbm"),
    "allen-cahn": ("Allen-Cahn phase field 256^3, A100", "lbm"),
    "allen-cahn-hydro": ("Allen-Cahn hydro 256^3, A100, 256 thr", "lbm"),
}
#: the lbmpy kernels of the rows above and the threads per block of their space (None: the default)
LBM_ROWS = {
    "d3q27": (lbm.d3q27_cumulant, None),
    "allen-cahn": (lbm.allen_cahn_phase_field, None),
    # the hydro kernel's 162 registers per thread leave no block of the default 512 threads runnable on the A100
    "allen-cahn-hydro": (lbm.allen_cahn_hydro, 256),
}


def row_in_this_process(key: str) -> dict:
    """Table 3's row `key` (`FRESH_PROCESS_ROWS`), timed in this process."""
    name, target = FRESH_PROCESS_ROWS[key]
    if key == "a100":
        return replay_row(name, FIRST_RUN_TARGETS_S[target], A100_SPEC, A100_CACHE, "A100")
    if key == "ktt":
        return replay_row(name, FIRST_RUN_TARGETS_S[target], KTT_SPEC, KTT_CSV, "RTX-2080-Ti")
    build, threads = LBM_ROWS[key]
    kernel = build(LBM_DOMAIN)  # lbmpy's generation: not timed
    return first_run(
        name,
        FIRST_RUN_TARGETS_S[target],
        lambda: pp.rank(kernel, "A100", threads=threads),
        lambda ranking: len(ranking.candidates),
    )


def fresh_process_row(key: str) -> dict:
    """`row_in_this_process(key)` in a new process with a new cache folder (``bench_rank.py --row KEY``)."""
    name, target = FRESH_PROCESS_ROWS[key]
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-bench-") as cache:
        child = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--row", key],
            env={**os.environ, CACHE_ENV: cache},
            capture_output=True,
            text=True,
        )
    if child.returncode:
        sys.stderr.write(f"bench_rank.py --row {key} failed ({child.returncode}):\n{child.stderr[-2000:]}\n")
        return {**run_row(name, FIRST_RUN_TARGETS_S[target], float("nan"), 0.0, 0, 0), "ok": False, "note": "FAILED"}
    return json.loads(child.stdout.strip().splitlines()[-1])


def compile_bytecode() -> None:
    """Write the bytecode of the product's modules (the package and its plugins), as ``pip install`` does for an
    installed package, so that table 3's fresh processes import what a user's script imports. In an editable
    checkout under ``PYTHONDONTWRITEBYTECODE`` (this development machine sets it) no process writes it, and every
    fresh process compiled the product's 68 modules from source again: 0.08-0.1 s of each row, which no installed
    package pays."""
    for package in (ROOT / "pystencils_perf", *sorted(ROOT.glob("plugins/*/pystencils_perf_*"))):
        if not compileall.compile_dir(package, quiet=1):
            raise RuntimeError(f"could not compile the bytecode of {package}")


def first_run_rows():
    compile_bytecode()
    for key in FRESH_PROCESS_ROWS:
        yield fresh_process_row(key)
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-bench-") as cache:
        yield quick_start_row("create_kernel over pystencils', quick start", cache, "")
        yield quick_start_row(
            "create_kernel again, new process", cache, "compiler reports and estimates kept on disk by the row above"
        )
    from bench_tune import caches

    for cache in caches():
        yield tune_row(cache, pp.get_device(read_kernel_tuner(cache).device_name).name)
    for spec, cache, device, label in SHARED_MEMORY_REPLAYS:
        if cache.exists():
            yield tune_row(cache, device, spec, label)
        else:
            yield skipped_row(f"tune --replay budget 10, {label}", FIRST_RUN_TARGETS_S["tune"], "skipped: not found")


def quick_start_row(name: str, cache: str, note: str) -> dict:
    """`quick_start.py`'s call in a new process (lazy imports included) with pystencils' cache folder `cache`:
    empty, everything is compiled and estimated afresh; filled by an earlier run, what that run kept on disk (the
    compiler's reports, the estimates: `estimate_store`) is read back, as when a script runs again."""
    child = subprocess.run(
        [sys.executable, "quick_start.py"],
        cwd=Path(__file__).resolve().parent,
        env={**os.environ, CACHE_ENV: cache},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if child.returncode:
        raise RuntimeError(f"the quick start's process failed: {child.stderr.strip()[-300:]}")
    r = json.loads(child.stdout.strip().splitlines()[-1])
    alone = f"pystencils.create_kernel alone {r['pystencils_s']:.2f} s"
    return run_row(
        name,
        FIRST_RUN_TARGETS_S["create_kernel"],
        r["overhead_s"],
        r["cpu_s"],
        r["peak"],
        r["candidates"],
        note or alone,
    )


def print_first_run(r) -> None:
    if "skipped" in r:
        print(f"{r['row']:<42} {r['skipped']}", flush=True)
        return
    per_candidate_ms = 1e3 * r["wall_s"] / r["candidates"] if r["candidates"] else float("nan")
    print(
        f"{r['row']:<42} {r['candidates']:>5} {r['wall_s']:>7.2f} {'<= %g' % r['target_s']:>7} {r['cpu_s']:>7.2f} "
        f"{per_candidate_ms:>8.2f} {r['peak_rss_MiB']:>12.0f}  {'ok' if r['ok'] else 'MISSED'}  {r['note']}".rstrip(),
        flush=True,
    )


def _rank_blocks_ms(kernel, blocks) -> tuple[float, float]:
    """Wall seconds of a serial ranking of `blocks` (x, y) with folding 1x1x1, and ms per block."""
    start = time.perf_counter()
    pp.rank(kernel, "A100", blocks=[(x, y, 1) for x, y in blocks], folds=[(1, 1, 1)], jobs=1)
    wall_s = time.perf_counter() - start
    return wall_s, 1e3 * wall_s / len(blocks)


def tile_scaling() -> None:
    spec = load_tunable_spec(A100_SPEC)

    def kernel(tile):
        return spec.kernel({"tile_size_x": tile, "tile_size_y": tile, "read_only": 0})

    _rank_blocks_ms(kernel(1), TILE_BLOCKS[:1])  # warm-up: imports, device, plugins
    print(f"A100 convolution SPEC, {len(TILE_BLOCKS)} blocks, serial: wall time per candidate against tile size")
    print(f"{'tile':>5} {'harvest s':>9} {'rank s':>7} {'ms/cand':>8}")
    for tile in (1, 2, 4, 8):
        k = kernel(tile)
        start = time.perf_counter()
        pp.harvest(k)  # cached: the ranking below reuses it
        harvest_s = time.perf_counter() - start
        wall_s, per_candidate_ms = _rank_blocks_ms(k, TILE_BLOCKS)
        print(f"{f'{tile}x{tile}':>5} {harvest_s:>9.2f} {wall_s:>7.2f} {per_candidate_ms:>8.1f}", flush=True)
    if not A100_CACHE.exists():
        print("against the number of candidates: skipped: cache not found")
        return
    data = read_kernel_tuner(A100_CACHE)
    blocks = sorted(
        {(int(p["block_size_x"]), int(p["block_size_y"])) for p in [r.params for r in data.runs] + list(data.failed)}
    )
    random.Random(0).shuffle(blocks)
    print()
    print("A100 convolution SPEC, serial: wall time against the number of candidates (blocks of the cache)")
    print(f"{'tile':>5} {'cands':>5} {'wall s':>7} {'ms/cand':>8}")
    for tile in (1, 4):
        for count in CANDIDATE_COUNTS:
            wall_s, per_candidate_ms = _rank_blocks_ms(kernel(tile), blocks[:count])
            print(f"{f'{tile}x{tile}':>5} {count:>5} {wall_s:>7.2f} {per_candidate_ms:>8.1f}", flush=True)


def scaling_rows(repeat, isl_limit_s):
    """One candidate (block 16x8x8) of star3d r4 per grid and device: both backends, ms."""
    block = (16, 8, 8)
    isl_gave_up = set()
    for n in SCALING_GRIDS:
        model = pp.harvest(star_3d(4, (n, n, n)))
        for name in ("V100", "H100"):
            device = pp.get_device(name)
            wave_threads = device.sm_count * occupancy(model, 1024, device).blocks_per_sm * 1024
            row = {"grid": f"{n}^3", "device": name, "threads_per_wave": wave_threads}
            row["enum"] = 1e3 * statistics.median(
                _time_one_candidate(model, device, "enum", block) for _ in range(repeat)
            )
            if name in isl_gave_up:
                row["isl"] = "not run"
            else:
                seconds = call_with_limit(_time_one_candidate, isl_limit_s, model, device, "isl", block)
                if seconds is None:
                    isl_gave_up.add(name)  # larger grids only take longer
                    row["isl"] = f"> {isl_limit_s:g} s"
                else:
                    row["isl"] = f"{1e3 * seconds:.1f}"
            yield row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--isl-limit", type=float, default=120.0, help="seconds per isl candidate before giving up")
    parser.add_argument("--skip-slow", action="store_true", help="leave out table 3 (the large spaces, tune --replay)")
    parser.add_argument("--scaling-tiles", action="store_true", help="cost per candidate against tile size and count")
    parser.add_argument(
        "--row", choices=sorted(FRESH_PROCESS_ROWS), help="time table 3's row in this process and print it as JSON"
    )
    args = parser.parse_args(argv)
    if args.row:
        print(json.dumps(row_in_this_process(args.row)))
        return 0

    spaces = [
        ("star3d r4 640x512x512, 1024 thr x 3 folds", star_3d(4, (640, 512, 512)), 1.0),
        ("D3Q19 SRT 256^3, 512 thr x 3 folds", lbm.d3q19_srt((256, 256, 256)), 5.0),
    ]
    print(
        f"{'space':<42} {'cands':>5} {'wall s':>7} {'target':>7} {'ms/cand':>8} {'backend':>7} {'peak RSS MiB':>12} "
        f"{'/limiters':>9}  ok"
    )
    failed = False
    for name, kernel, target in spaces:
        r = time_space(name, kernel, target, args.repeat)
        failed |= not r["ok"]
        print(
            f"{r['space']:<42} {r['candidates']:>5} {r['wall_s']:>7.2f} {'<= %g' % r['target_s']:>7} "
            f"{r['per_candidate_ms']:>8.1f} {r['backend']:>7} {r['peak_rss_MiB']:>12.0f} "
            f"{r['over_limiters']:>6.2f}x  {'yes' if r['ok'] else 'MISSED'}"
        )
    if not args.skip_slow:
        print()
        print("first run in a fresh process: wall and CPU (that process and its children) time, peak RSS")
        print(
            f"{'row':<42} {'cands':>5} {'wall s':>7} {'target':>7} {'cpu s':>7} {'ms/cand':>8} {'peak RSS MiB':>12}  ok"
        )
        for r in first_run_rows():
            failed |= not r["ok"]
            print_first_run(r)
    if args.scaling_tiles:
        print()
        tile_scaling()
    if not args.skip_scaling:
        print()
        print("one candidate (block 16x8x8) of star3d r4 against grid size and threads per wave, ms per candidate")
        print(f"{'grid':>7} {'device':>6} {'threads/wave':>13} {'enum':>8} {'isl':>10}")
        for row in scaling_rows(args.repeat, args.isl_limit):
            print(
                f"{row['grid']:>7} {row['device']:>6} {row['threads_per_wave']:>13} {row['enum']:>8.1f} {row['isl']:>10}",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
