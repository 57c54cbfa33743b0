"""Measured over predicted throughput of the held-out Hopper sets by block width: what the default model misses.

    nice -n 10 python3 validation/hopper/width_residuals.py [--cache DIR]

For each held-out Hopper set of `validation/default_model.py` (ranked as there; `--cache` shares its pickles), the
geometric mean of measured / predicted throughput of its launches grouped by fold and by block width (threads in x:
under 32, where a warp spans rows, then 32, 64, 128 and 256 or more). A ratio that grows with the width at equal
volumes is what the model does not price: `README.md`, "Block width". Prints a Markdown table; fits nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # validation/: the shared helpers

from default_model import HELD_OUT_DATA_SETS, cached, repredicted  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402

#: block widths (threads in x) by the group they are reported in: warps that span rows, then one row per warp
WIDTH_GROUPS = ("< 32", "32", "64", "128", ">= 256")


def width_group(block_x: int) -> str:
    """The group of `WIDTH_GROUPS` a block `block_x` threads wide falls in (the power of two at or below it)."""
    if block_x < 32:
        return "< 32"
    return ">= 256" if block_x >= 256 else str(1 << (block_x.bit_length() - 1))


def ratios_by_width(pairs) -> dict[tuple[int, int, int], dict[str, float]]:
    """Per fold, the geometric mean of measured / predicted throughput per width group."""
    logs = defaultdict(lambda: defaultdict(list))
    for pair in pairs:
        ratio = pair.measured.values["glups"] / pair.candidate.prediction.glups
        logs[pair.launch.fold][width_group(pair.launch.block[0])].append(np.log(ratio))
    return {
        fold: {group: float(np.exp(np.mean(values))) for group, values in groups.items()}
        for fold, groups in logs.items()
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="default_model.py's pickles (see its docstring)")
    args = parser.parse_args(argv)
    print("| data set | stores per point | fold | " + " | ".join(f"x {g}" for g in WIDTH_GROUPS) + " |")
    print("|---|---|---|" + "---|" * len(WIDTH_GROUPS))
    for data in HELD_OUT_DATA_SETS:
        pairs = repredicted(cached(data.name, args.cache, data.rank), get_device(data.device), data.fields())
        stores = pairs[0].candidate.metrics.extras["stores_per_update"]
        for fold, groups in sorted(ratios_by_width(pairs).items()):
            cells = " | ".join(f"{groups[g]:.2f}" if g in groups else "-" for g in WIDTH_GROUPS)
            print(f"| {data.name} | {stores:g} | {'x'.join(map(str, fold))} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
