"""Speed and memory targets of the estimator (issue: "rank a whole space in about a second").

    python benchmarks/bench_rank.py [--repeat N] [--skip-scaling]

Table 1, per candidate space: wall time of ``pystencils_perf.rank`` (harvest
included, kernel generation excluded; median of N runs), median time per
candidate, backend and the process's peak resident memory; the exit status is
non-zero when a target is missed. Table 2: cost of one candidate against grid
size and threads per wave, for both footprint backends (ISL only on grids where
it finishes: it needs 27 s at 16^3 and more than 5 minutes at 64^3 today).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSTENCILS_CACHE_DIR", tempfile.mkdtemp(prefix="pystencils-perf-bench-"))

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import lbm, star_3d  # noqa: E402
from pystencils_perf.estimate.volumes import occupancy  # noqa: E402

PEAK_MEMORY_TARGET_BYTES = 1 << 30
ISL_GRIDS = (16,)  # larger grids take minutes per candidate with the ISL backend


def time_space(name, kernel, target_s, repeat, **kwargs):
    walls, per_candidate = [], []
    for _ in range(repeat):
        times = []
        last = [time.perf_counter()]

        def progress(items):
            for item in items:
                yield item
                now = time.perf_counter()
                times.append(now - last[0])
                last[0] = now

        start = time.perf_counter()
        ranking = pp.rank(kernel, "V100", progress=progress, **kwargs)
        walls.append(time.perf_counter() - start)
        per_candidate.extend(times)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    wall = statistics.median(walls)
    ok = wall <= target_s and peak <= PEAK_MEMORY_TARGET_BYTES
    return {
        "space": name,
        "candidates": len(ranking.candidates),
        "wall_s": wall,
        "per_candidate_ms": 1e3 * statistics.median(per_candidate),
        "backend": kwargs.get("backend", "auto"),
        "peak_rss_MiB": peak / 2**20,
        "target_s": target_s,
        "ok": ok,
    }


def scaling_rows(repeat):
    block, device = (16, 8, 8), pp.get_device("V100")
    for n in ISL_GRIDS + (64, 128, 256, 512, 1024):
        model = pp.harvest(star_3d(4, (n, n, n)))
        wave_threads = device.sm_count * occupancy(model, 1024, device).blocks_per_sm * 1024
        row = {"grid": f"{n}^3", "threads_per_wave": wave_threads}
        for backend in ("enum", "isl"):
            if backend == "isl" and n not in ISL_GRIDS:
                row[backend] = None
                continue
            runs = []
            for _ in range(repeat if backend == "enum" else 1):
                start = time.perf_counter()
                pp.rank(model, device, blocks=[block], folds=[(1, 1, 1)], backend=backend)
                runs.append(time.perf_counter() - start)
            row[backend] = 1e3 * statistics.median(runs)
        yield row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-scaling", action="store_true")
    args = parser.parse_args(argv)

    spaces = [
        ("star3d r4 640x512x512, 1024 thr x 3 folds", star_3d(4, (640, 512, 512)), 2.0),
        ("D3Q19 SRT 256^3, 512 thr x 3 folds", lbm.d3q19_srt((256, 256, 256)), 5.0),
    ]
    print(f"{'space':<42} {'cands':>5} {'wall s':>7} {'target':>7} {'ms/cand':>8} {'backend':>7} {'peak RSS MiB':>12}  ok")
    failed = False
    for name, kernel, target in spaces:
        r = time_space(name, kernel, target, args.repeat)
        failed |= not r["ok"]
        print(
            f"{r['space']:<42} {r['candidates']:>5} {r['wall_s']:>7.2f} {'<= %g' % r['target_s']:>7} "
            f"{r['per_candidate_ms']:>8.1f} {r['backend']:>7} {r['peak_rss_MiB']:>12.0f}  {'yes' if r['ok'] else 'MISSED'}"
        )
    if not args.skip_scaling:
        print()
        print("one candidate (block 16x8x8) of star3d r4 against grid size, ms per candidate")
        print(f"{'grid':>7} {'threads/wave':>13} {'enum':>8} {'isl':>8}")
        for row in scaling_rows(args.repeat):
            isl = "skipped" if row["isl"] is None else f"{row['isl']:.1f}"
            print(f"{row['grid']:>7} {row['threads_per_wave']:>13} {row['enum']:>8.1f} {isl:>8}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
