"""Refit the V100 capacity-miss curves to the shared measurements: in-sample and held-out errors.

    python validation/v100_calibrate.py

Calibrates (`pystencils_perf.estimate.capacity.calibrate`, what `pystencils-perf
calibrate` runs) on the whole data set and on parts of it, and prints the MAPE
of the DRAM and L2 loads with the authors' coefficients and with the refitted
ones, on the candidates the fit saw (in-sample) and on those it did not:
alternate block shapes, and the 4x z-folding extrapolated from 1x and 2x.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.estimate.capacity import calibrate  # noqa: E402
from pystencils_perf.measure.dataset import METRIC_BY_NAME, Dataset, read_dataset  # noqa: E402
from pystencils_perf.spec import load_spec  # noqa: E402
from pystencils_perf.validate import validate  # noqa: E402

HERE = Path(__file__).parent
DATA = HERE / "data" / "v100" / "v100_star3d_r2_1024_folding.csv"
SPEC = HERE / "data" / "v100" / "star3d_r2.py"
METRICS = ("dram_load", "l2_load")


def main() -> int:
    dataset = read_dataset(DATA)
    kernel = load_spec(SPEC).kernel
    authors = get_device("V100")
    full = validate(dataset, kernel, authors, align="interior")
    blocks = dataset.blocks
    splits = {
        "all 90 (in-sample)": lambda p: True,
        "even block shapes -> odd": lambda p: blocks.index(p.launch.block) % 2 == 0,
        "odd block shapes -> even": lambda p: blocks.index(p.launch.block) % 2 == 1,
        "z-fold 1, 2 -> 4": lambda p: p.launch.fold[2] < 4,
    }
    print(
        f"V100 {full.ranking.kernel} ({full.ranking.resources_note}): MAPE % with the authors' coefficients -> refitted, on the candidates judged"
    )
    print(
        f"{'fitted on -> judged on':<26} {'judged':>6}  " + "  ".join(f"{METRIC_BY_NAME[m].label:>16}" for m in METRICS)
    )
    for name, in_fit in splits.items():
        fit_pairs = [p for p in full.pairs if in_fit(p)]
        judged = [p for p in full.pairs if not in_fit(p)] or fit_pairs
        result = calibrate(
            [(p.measured.values, p.candidate.metrics) for p in fit_pairs], authors.curves, unified_l2=authors.unified_l2
        )
        subset = Dataset(dataset.path, tuple(p.measured for p in judged))
        before = validate(subset, kernel, authors, align="interior")
        after = validate(subset, kernel, replace(authors, curves=result.curves), align="interior")
        cells = [f"{before.error(m).mape_percent:7.2f} -> {after.error(m).mape_percent:5.2f}" for m in METRICS]
        print(f"{name:<26} {len(judged):>6}  " + "  ".join(f"{c:>16}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
