"""Fit Hopper's `shared_memory_max_overlap_exponent` on the H200's shared-memory sample, and report it on the rest.

    python3 validation/hopper/fit_shared_memory_overlap.py [--cache DIR]

The throughput model combines the SM's terms of a kernel that stages data in shared memory by a power mean whose
exponent is at most `ThroughputConstants.shared_memory_max_overlap_exponent` (1, a sum, until measured). The H200's
Kernel Tuner sample of 320 shared-memory configurations (`data/h200`, 269 timed launches) is the fitting set: the
exponent on a grid from 1 to 3 in steps of 0.05 that gives the least MAPE of throughput there. The other 2122
configurations of the same space, timed on a later lease and predicted before it (`data/h200/shmem_rest`, 1789
launches), are the report: Spearman, the pick's share of the best (ties at their worst), the best's predicted rank,
MAPE of throughput and of time, and the median predicted over measured time, at 1 and at the fit. Each launch's
metrics are `validation/default_model.py`'s (its registers from the compiled sm_90 tables); `--cache DIR` shares
that script's pickles.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

import default_model  # noqa: E402  (sets pystencils' cache to a temporary folder)
from convolution_summary import use_compiled_registers  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.models.throughput import constants_for, prediction  # noqa: E402
from pystencils_perf.validate import time_scores  # noqa: E402

FIT_SET, REPORT_SET = "H200 convolution, shared memory", "H200 convolution, shared memory, the rest"
GRID = np.round(np.arange(1.0, 3.0001, 0.05), 2)


def predicted_and_measured_ns(pairs, device, fields, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """Each launch's predicted and measured time per update (ns), the exponent's bound set to `exponent`."""
    constants = replace(constants_for(device), shared_memory_max_overlap_exponent=float(exponent))
    kernel = default_model.kernel_of_fields(fields)
    predicted = [1.0 / prediction(kernel, device, p.candidate.metrics, constants).lups_per_second for p in pairs]
    measured = [1.0 / p.measured.values["glups"] for p in pairs]
    return np.array(predicted) * 1e9, np.array(measured)


def throughput_mape(predicted: np.ndarray, measured: np.ndarray) -> float:
    """MAPE of the predicted throughput (the inverse times), percent: what the fit minimises."""
    return float(np.mean(np.abs(measured / predicted - 1.0)) * 100)


def row(name: str, exponent: float, predicted: np.ndarray, measured: np.ndarray) -> str:
    s = time_scores(predicted, measured)
    return (
        f"| {name} | {exponent:.2f} | {len(measured)} | {s.spearman:.3f} | {100 * s.pick_share_of_best:.1f} % | "
        f"{s.best_predicted_rank} | {throughput_mape(predicted, measured):.1f} | {s.mape_percent:.1f} | {np.median(predicted / measured):.2f} |"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="validate/default_model.py's folder of metrics pickles")
    args = parser.parse_args(argv)
    use_compiled_registers()
    sets = {d.name: d for d in default_model.SHARED_MEMORY_DATA_SETS}
    scored = {}
    for name in (FIT_SET, REPORT_SET):
        data = sets[name]
        pairs = default_model.cached(data.name, args.cache, data.rank)
        scored[name] = (pairs, get_device(data.device), data.fields())
    pairs, device, fields = scored[FIT_SET]
    mapes = [throughput_mape(*predicted_and_measured_ns(pairs, device, fields, exponent)) for exponent in GRID]
    fitted = float(GRID[int(np.argmin(mapes))])
    print(f"fitted on {FIT_SET} ({len(pairs)} launches): exponent {fitted:.2f}, MAPE of throughput {min(mapes):.1f} %")
    print(
        "\n| data | exponent | launches | Spearman | pick's share of the best | best's predicted rank | "
        "MAPE of throughput % | MAPE of time % | predicted / measured time |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (pairs, device, fields) in scored.items():
        for exponent in (1.0, fitted):
            print(row(name, exponent, *predicted_and_measured_ns(pairs, device, fields, exponent)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
