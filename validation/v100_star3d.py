"""Rank exactly the space of the shared V100 measurements and report the error per metric.

    python validation/v100_star3d.py [--backend auto|enum|isl] [--csv OUT.csv]

Prints, per metric (DRAM load, DRAM store, L2 load, L2 store), the mean absolute
percentage error of the predictions against `data/v100/v100_star3d_r2_1024_folding.csv`
and exits non-zero if DRAM load or L2 load exceed 12 %.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("PYSTENCILS_CACHE_DIR", tempfile.mkdtemp(prefix="pystencils-perf-"))

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import star_3d  # noqa: E402

DATA = Path(__file__).parent / "data" / "v100" / "v100_star3d_r2_1024_folding.csv"
METRICS = {
    "DRAM load": ("meas_dram_load_B_per_lup", "dram_load"),
    "DRAM store": ("meas_dram_store_B_per_lup", "dram_store"),
    "L2 load": ("meas_l2_load_B_per_lup", "l2_load"),
    "L2 store": ("meas_l2_store_B_per_lup", "l2_store"),
}
TARGET_MAPE_PERCENT = {"DRAM load": 12.0, "L2 load": 12.0}


def read_measurements(path=DATA):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def predict_rows(rows, backend="auto"):
    """The ranking of exactly the measured (block, fold) space, keyed by (block, fold)."""
    blocks = sorted({(int(r["bx"]), int(r["by"]), int(r["bz"])) for r in rows})
    folds = sorted({(int(r["fx"]), int(r["fy"]), int(r["fz"])) for r in rows})
    kernel = star_3d(2, (596, 596, 508))  # arrays 600 x 600 x 512, ghost layers 2
    ranking = pp.rank(kernel, "V100", blocks=blocks, folds=folds, align="interior", backend=backend)
    return {(c.launch.block, c.launch.fold): c for c in ranking.candidates}


def mape_table(rows, predicted):
    errors = {name: [] for name in METRICS}
    for r in rows:
        key = ((int(r["bx"]), int(r["by"]), int(r["bz"])), (int(r["fx"]), int(r["fy"]), int(r["fz"])))
        cand = predicted[key].as_json()["bytes_per_lup"]
        for name, (column, pkey) in METRICS.items():
            measured = float(r[column])
            errors[name].append(abs(cand[pkey] - measured) / measured * 100.0)
    return {name: sum(e) / len(e) for name, e in errors.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--csv", help="write measured and predicted values per candidate")
    args = parser.parse_args(argv)
    rows = read_measurements()
    predicted = predict_rows(rows, args.backend)
    table = mape_table(rows, predicted)
    print(f"V100 star3d r2, {len(rows)} measured configurations ({DATA.name})")
    print(f"{'metric':<11} {'MAPE %':>7} {'target':>7}")
    failed = False
    for name, value in table.items():
        target = TARGET_MAPE_PERCENT.get(name)
        ok = target is None or value <= target
        failed |= not ok
        print(f"{name:<11} {value:>7.2f} {('<= %g' % target) if target else '':>7} {'' if ok else 'MISSED'}")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["bx", "by", "bz", "fx", "fy", "fz"] + [f"{p}_{k}" for k in METRICS for p in ("meas", "pred")])
            for r in rows:
                key = ((int(r["bx"]), int(r["by"]), int(r["bz"])), (int(r["fx"]), int(r["fy"]), int(r["fz"])))
                b = predicted[key].as_json()["bytes_per_lup"]
                vals = []
                for column, pkey in METRICS.values():
                    vals += [r[column], f"{b[pkey]:.2f}"]
                w.writerow([*key[0], *key[1], *vals])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
