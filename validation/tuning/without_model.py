"""The search without predictions (what a kernel no SPEC describes gets) replayed on Kernel Tuner caches of any
kernel, beside what random sampling reaches.

    python3 validation/tuning/without_model.py [--repeats 10] CACHE [CACHE ...]

For each cache (a Kernel Tuner cache file, e.g. benchmark_hub's `cachefiles/dedispersion_milo/*.json.gz`): the
fraction of the optimum after 5 / 10 / 20 / 50 measurements of `ModelGuidedSearch` with every configuration alike,
with today's settings and with those before 2026-11-28 (smooth error 0.35, half a standard deviation of
exploration), the best of Kernel Tuner's strategies at each budget (each strategy's mean over `--repeats` seeds, in
Kernel Tuner's simulation mode as `benchmarks/bench_tune.py` replays them; `--repeats 0` leaves them out), the
exact expectation of random sampling (`expected_of_random_sampling`), and the cache's timing noise (median and 90th
percentile over its configurations of the slowest over the fastest of their runs, minus 1). Configurations that
failed when recorded cost a measurement and give no time, as on the GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-without-model-")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # bench_tune: Kernel Tuner's replays

import bench_tune  # noqa: E402
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import run_to_run_spreads  # noqa: E402
from pystencils_perf.tune.replay import expected_of_random_sampling  # noqa: E402
from pystencils_perf.tune.search import ModelGuidedSearch, SearchSettings  # noqa: E402

BUDGETS = (5, 10, 20, 50)
SETTINGS = {
    "before 2026-11-28": SearchSettings(parameters_log_error=0.35, exploration_without_model=0.5),
    "today": SearchSettings(),
}


def fractions(params: list[dict], times: list[float | None], settings: SearchSettings) -> list[float]:
    """The optimum over the best time found after each of `BUDGETS` measurements."""
    search = ModelGuidedSearch(np.ones(len(params)), params, settings)
    optimum, found = min(t for t in times if t is not None), []
    for made in range(1, max(BUDGETS) + 1):
        index = search.next_batch(1)[0]
        search.observe(index, times[index])
        if made in BUDGETS:
            best = search.best()
            found.append(optimum / best[1] if best else 0.0)
    return found


def noise_cell(cache: dict) -> str:
    """The cache's run-to-run spread (median / 90th percentile), where its runs time what its `time` does: the
    median of `time` over the mean of its runs between 0.5 and 2 (benchmark_hub's RTX 2080 Ti pnpoly cache records
    runs about 500 times shorter than its times)."""
    timed = [e for e in cache["cache"].values() if isinstance(e.get("times"), list) and e["times"]]
    ratios = [e["time"] / np.mean(e["times"]) for e in timed if isinstance(e["time"], float) and min(e["times"]) > 0]
    if not ratios:
        return "no runs recorded"
    if not 0.5 <= float(np.median(ratios)) <= 2:
        return f"runs not of the recorded time (time / runs' mean: median {np.median(ratios):.3g})"
    spreads = run_to_run_spreads(cache)
    return f"{100 * np.median(spreads):.1f} / {100 * np.percentile(spreads, 90):.1f} %"


def best_of_kernel_tuner(replay, repeats: int) -> list[float]:
    """At each of `BUDGETS`, the highest of Kernel Tuner's strategies' mean fractions of the optimum over `repeats`
    seeds."""
    best = [0.0] * len(BUDGETS)
    for strategy in bench_tune.KERNEL_TUNER_STRATEGIES:
        orders = [replay.run(strategy, max(BUDGETS), seed) for seed in range(repeats)]
        for i, n in enumerate(BUDGETS):
            best[i] = max(best[i], float(np.mean([replay.fraction_after(o, n) for o in orders])))
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path, help="Kernel Tuner cache files")
    parser.add_argument(
        "--repeats", type=int, default=10, help="seeds of each Kernel Tuner strategy (0: leave them out)"
    )
    args = parser.parse_args(argv)
    if args.repeats < 0:
        print(f"without_model.py: error: --repeats must be 0 or more, got {args.repeats}", file=sys.stderr)
        return 2
    try:  # each cache read once: its runs (`Replay.data`) and its file as Kernel Tuner wrote it (`Replay.raw`)
        replays = [bench_tune.Replay(path, None, None) for path in args.caches]
    except PerfError as error:
        print(f"without_model.py: error: {error}", file=sys.stderr)
        return 2
    head = " / ".join(map(str, BUDGETS))
    columns = [*SETTINGS, *(["the best Kernel Tuner strategy at each budget"] if args.repeats else [])]
    print(f"| cache | configurations | {' | '.join(columns)} | random sampling (expected) | noise (median / p90) |")
    print("|---|---|" + "---|" * (len(columns) + 2))
    rows = []
    for replay in replays:
        path, data = replay.path, replay.data
        params = [r.params for r in data.runs] + [dict(p) for p in data.failed]
        times = [r.time_ms for r in data.runs] + [None] * len(data.failed)
        row = [fractions(params, times, s) for s in SETTINGS.values()]
        if args.repeats:
            row.append(best_of_kernel_tuner(replay, args.repeats))
        row.append([expected_of_random_sampling(times, b) for b in BUDGETS])
        rows.append(row)
        cells = [" / ".join(f"{100 * f:.1f}" for f in found) + " %" for found in row]
        print(f"| {path.parent.name}/{path.name} | {len(params)} | {' | '.join(cells)} | {noise_cell(replay.raw)} |")
    means = np.mean(np.array(rows), axis=0)
    cells = [" / ".join(f"{100 * f:.1f}" for f in found) + " %" for found in means]
    print(f"| mean | | {' | '.join(cells)} | |")
    print(f"\n(fractions of the optimum after {head} measurements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
