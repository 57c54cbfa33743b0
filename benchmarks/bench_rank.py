"""Speed and memory targets of the estimator (issue: "rank a whole space in about a second").

    python benchmarks/bench_rank.py [--repeat N] [--skip-scaling]

Table 1, per candidate space: wall time of ``pystencils_perf.rank`` with the default
model (harvest included, kernel generation excluded; median of N runs), median time per
candidate, backend, the process's peak resident memory, and the wall time over the
limiter model's (at most `DEFAULT_OVER_LIMITERS_TARGET`); the exit status is
non-zero when a target is missed. Table 2: cost of one candidate against grid
size and threads per wave (V100: 80 SMs, H100: 132 SMs, 2048 threads each),
for both footprint backends; an ISL candidate that needs more than
``--isl-limit`` seconds is stopped, and larger grids are not tried.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-bench-")

import pystencils_perf as pp  # noqa: E402
from limits import call_with_limit  # noqa: E402
from pystencils_perf.catalog import lbm, star_3d  # noqa: E402
from pystencils_perf.estimate.volumes import occupancy  # noqa: E402

PEAK_MEMORY_TARGET_BYTES = 1 << 30
#: the default model's ranking may cost at most this much more than the limiters' (issue 26: the throughput model
#: became the default at no more than 1.5x the ranking cost of the limiter model it replaced)
DEFAULT_OVER_LIMITERS_TARGET = 1.5
SCALING_GRIDS = (16, 32, 64, 128, 256, 512, 1024)


def median_wall_s(kernel, repeat, **kwargs) -> float:
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        pp.rank(kernel, "V100", **kwargs)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


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
    over_limiters = wall / median_wall_s(kernel, repeat, model="limiters", **kwargs)
    ok = wall <= target_s and peak <= PEAK_MEMORY_TARGET_BYTES and over_limiters <= DEFAULT_OVER_LIMITERS_TARGET
    return {
        "space": name,
        "candidates": len(ranking.candidates),
        "wall_s": wall,
        "per_candidate_ms": 1e3 * statistics.median(per_candidate),
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
            row["enum"] = 1e3 * statistics.median(_time_one_candidate(model, device, "enum", block) for _ in range(repeat))
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
    args = parser.parse_args(argv)

    spaces = [
        ("star3d r4 640x512x512, 1024 thr x 3 folds", star_3d(4, (640, 512, 512)), 2.0),
        ("D3Q19 SRT 256^3, 512 thr x 3 folds", lbm.d3q19_srt((256, 256, 256)), 5.0),
    ]
    print(f"{'space':<42} {'cands':>5} {'wall s':>7} {'target':>7} {'ms/cand':>8} {'backend':>7} {'peak RSS MiB':>12} "
          f"{'/limiters':>9}  ok")
    failed = False
    for name, kernel, target in spaces:
        r = time_space(name, kernel, target, args.repeat)
        failed |= not r["ok"]
        print(
            f"{r['space']:<42} {r['candidates']:>5} {r['wall_s']:>7.2f} {'<= %g' % r['target_s']:>7} "
            f"{r['per_candidate_ms']:>8.1f} {r['backend']:>7} {r['peak_rss_MiB']:>12.0f} "
            f"{r['over_limiters']:>6.2f}x  {'yes' if r['ok'] else 'MISSED'}"
        )
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
