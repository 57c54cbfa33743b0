"""Score blind predictions of the convolution (either half of its space) against a lent GPU's cache, and its noise.

    python3 validation/hopper/score_convolution_shmem.py PREDICTIONS.csv CACHE.json.gz [RERUN.json.gz]

PREDICTIONS is `convolution_shmem_sample.py`'s file (written before the timing: blind); its columns before
``predicted_ms`` name a configuration, with ``use_padding`` among them for the shared-memory half and without it for
the half without shared memory (``--global-half``), whose rows of CACHE it then scores. Prints, over the
configurations both timed and predicted: Spearman of predicted against measured time, the measured share of
the best of the predicted best (ties at their worst), the measured best's predicted rank, MAPE of the
predicted time, the Spearman of the measured time against one count alone (distinct shared loads per output; the
shared-memory half only), and the median and 90th percentile of |first - rerun| / first over the configurations
timed twice.
"""

from __future__ import annotations

import csv
import gzip
import json
import sys

import numpy as np

from pystencils_perf.validate import rerun_spreads, spearman, time_scores


def measured(path: str, key: tuple[str, ...]) -> tuple[dict[tuple[int, ...], float], dict[str, int]]:
    """Time per launch (ms) by `key` of the rows of the half `key` names (with ``use_padding``: shared memory), and
    how many of them failed by reason."""
    shmem = int("use_padding" in key)
    with gzip.open(path, "rt") as fh:
        entries = json.load(fh)["cache"].values()
    times, failed = {}, {}
    for e in entries:
        if e.get("use_shmem") != shmem:
            continue
        if isinstance(e["time"], (int, float)):
            times[tuple(int(e[k]) for k in key)] = float(e["time"])
        else:
            failed[e["time"]] = failed.get(e["time"], 0) + 1
    return times, failed


def shared_loads_per_output(block_x: int, block_y: int, tile_x: int, tile_y: int) -> float:
    """Distinct shared values a thread reads per output where it keeps each in a register: rows ``yi * block_y + i``
    of its tile points overlap where the block is fewer than 15 rows high (columns alike)."""
    rows = len({yi * block_y + i for yi in range(tile_y) for i in range(15)})
    columns = len({xi * block_x + j for xi in range(tile_x) for j in range(15)})
    return rows * columns / (tile_x * tile_y)


def main(argv=None) -> int:
    args = argv or sys.argv[1:]
    with open(args[0], newline="") as fh:
        rows = csv.DictReader(fh)
        key = tuple(rows.fieldnames[: rows.fieldnames.index("predicted_ms")])
        predicted = {tuple(int(r[k]) for k in key): float(r["predicted_ms"]) for r in rows if r["predicted_ms"]}
    times, failed = measured(args[1], key)
    both = sorted(set(times) & set(predicted))
    p = np.array([predicted[c] for c in both])
    m = np.array([times[c] for c in both])
    s = time_scores(p, m)
    print(f"{len(times)} timed, failed: {failed or 'none'}; {len(both)} timed and predicted")
    print(
        f"Spearman {s.spearman:.3f}, predicted best at {100 * s.pick_share_of_best:.1f} % of the measured best "
        f"({', '.join(f'{k}={v}' for k, v in zip(key, both[int(np.argmin(p))]))}), measured best "
        f"({', '.join(f'{k}={v}' for k, v in zip(key, both[int(np.argmin(m))]))}, {m.min():.4f} ms) at predicted rank "
        f"{s.best_predicted_rank} of {len(both)}, MAPE {s.mape_percent:.1f} %, predicted / measured time median {np.median(p / m):.3f}"
    )
    if "use_padding" in key:
        shared_loads = np.array([shared_loads_per_output(*c[:4]) for c in both])
        print(
            "Spearman of the measured time against distinct shared loads per output alone: "
            f"{spearman(shared_loads, m):.3f}"
        )
    if len(args) > 2:
        rerun, _ = measured(args[2], key)
        spread = rerun_spreads(times, rerun) * 100
        print(
            f"noise over {len(spread)} timed twice: median {np.median(spread):.1f} %, p90 {np.percentile(spread, 90):.1f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
