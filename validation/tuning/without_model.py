"""The search without predictions (what a kernel no SPEC describes gets) replayed on Kernel Tuner caches of any
kernel, beside what random sampling reaches.

    python3 validation/tuning/without_model.py CACHE [CACHE ...]

For each cache (a Kernel Tuner cache file, e.g. benchmark_hub's `cachefiles/dedispersion_milo/*.json.gz`): the
fraction of the optimum after 5 / 10 / 20 / 50 measurements of `ModelGuidedSearch` with every configuration alike,
with today's settings and with those before 2026-11-28 (smooth error 0.35, half a standard deviation of
exploration), and the exact expectation of random sampling (`expected_of_random_sampling`). Configurations that
failed when recorded cost a measurement and give no time, as on the GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-without-model-")

from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import read_kernel_tuner  # noqa: E402
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path, help="Kernel Tuner cache files")
    args = parser.parse_args(argv)
    try:
        caches = [(path, read_kernel_tuner(path)) for path in args.caches]
    except PerfError as error:
        print(f"without_model.py: error: {error}", file=sys.stderr)
        return 2
    head = " / ".join(map(str, BUDGETS))
    print(f"| cache | configurations | {' | '.join(SETTINGS)} | random sampling (expected) |")
    print("|---|---|" + "---|" * (len(SETTINGS) + 1))
    rows = []
    for path, data in caches:
        params = [r.params for r in data.runs] + [dict(p) for p in data.failed]
        times = [r.time_ms for r in data.runs] + [None] * len(data.failed)
        row = [fractions(params, times, s) for s in SETTINGS.values()]
        row.append([expected_of_random_sampling(times, b) for b in BUDGETS])
        rows.append(row)
        cells = [" / ".join(f"{100 * f:.1f}" for f in found) + " %" for found in row]
        print(f"| {path.parent.name}/{path.name} | {len(params)} | {' | '.join(cells)} |")
    means = np.mean(np.array(rows), axis=0)
    cells = [" / ".join(f"{100 * f:.1f}" for f in found) + " %" for found in means]
    print(f"| mean | | {' | '.join(cells)} |")
    print(f"\n(fractions of the optimum after {head} measurements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
