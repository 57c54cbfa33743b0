"""Validate the estimator on the shared V100 measurements and check the project's accuracy targets.

    python validation/v100_star3d.py [--device V100|FILE.toml] [--backend auto|enum|isl] [--out DIR]

Runs the product's validation (`pystencils-perf validate`) on
`data/v100/v100_star3d_r2_1024_folding.csv` with its SPEC beside it, prints the
error per metric and exits non-zero if the MAPE of DRAM load or L2 load exceeds
12 %. `--out` also writes the report and plots; the committed ones in `v100/`
come from

    pystencils-perf validate validation/data/v100/v100_star3d_r2_1024_folding.csv \\
        --device V100 --spec validation/data/v100/star3d_r2.py --align interior --out validation/v100
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from pystencils_perf.measure.dataset import read_dataset  # noqa: E402
from pystencils_perf.spec import load_spec  # noqa: E402
from pystencils_perf.validate import validate, write_report  # noqa: E402

HERE = Path(__file__).parent
DATA = HERE / "data" / "v100" / "v100_star3d_r2_1024_folding.csv"
SPEC = HERE / "data" / "v100" / "star3d_r2.py"
TARGET_MAPE_PERCENT = {"dram_load": 12.0, "l2_load": 12.0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="V100", help="device name or file (default V100)")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--out", help="write the report and plots into this folder")
    args = parser.parse_args(argv)
    result = validate(read_dataset(DATA), load_spec(SPEC).kernel, args.device, align="interior", backend=args.backend)
    print(result.table())
    missed = [e for e in result.errors if e.mape_percent > TARGET_MAPE_PERCENT.get(e.metric.name, float("inf"))]
    for e in missed:
        print(f"MISSED: {e.metric.label} MAPE {e.mape_percent:.2f} % > {TARGET_MAPE_PERCENT[e.metric.name]:g} %")
    if args.out:
        print(f"report: {write_report(result, args.out).path}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
