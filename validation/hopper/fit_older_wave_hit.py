"""Fit the ``older_wave_hit`` curve of a GH100 device file on measured DRAM load volumes; report it on others.

    nice python3 validation/hopper/fit_older_wave_hit.py

The estimator counts what a wave finds of older waves in L2 (`estimate.volumes.older_wave_hits`): without a
curve, each older wave's bytes hit while the waves back to it fit in the L2 the current wave leaves (ratio
<= 1), a step. On Hopper's two-partition L2 that edge is soft (validation/hopper/README.md). Here each
candidate's prediction is ``D0 - sum(hit(ratio_j) * bytes_j) / lups``, with ``D0`` the estimate without older
hits and ``(ratio_j, bytes_j)`` what `older_wave_reuse` finds up to twice the room, and the curve
``hit(x) = 1 - exp(-b * exp(-c * x))`` (a Gompertz complement, as the device files write it) is fitted by least
squares on the relative errors of one data set (``FIT_ON``): the H200's star r=4 ncu volumes (160 candidates).
The others are reported with the step and the fitted curve, as the DRAM load MAPE.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.devices import Curve, get_device  # noqa: E402
from pystencils_perf.estimate import volumes  # noqa: E402
from pystencils_perf.measure.dataset import read_dataset  # noqa: E402
from pystencils_perf.spec import load_spec  # noqa: E402

HERE = Path(__file__).resolve().parent
#: (name, device, SPEC, ncu data set); the first is fitted on
DATA_SETS = (
    ("H200 star r=4", "H200", "examples/star3d_r4.py", "data/star3d_r4_ncu.csv"),
    ("H100 star r=4", "H100", "examples/star3d_r4.py", "data/h100/star3d_r4_ncu.csv"),
    ("H200 star r=1", "H200", "validation/hopper/star3d_r1.py", "data/star3d_r1_ncu.csv"),
    ("H200 D3Q19 SRT", "H200", "validation/hopper/d3q19_srt.py", "data/d3q19_srt_ncu.csv"),
    ("H100 D3Q19 streaming", "H100", "validation/hopper/stream19.py", "data/h100/stream19_ncu.csv"),
)
NO_HITS, ALL_HITS = Curve(0.0, 1.0, 1.0), Curve(0.0, 1.0, 1.0, complement=True)


def collect(device_name: str, spec: str, data: str) -> list[dict]:
    """Per measured candidate: its DRAM load, D0, and what each older wave offers per update."""
    device = get_device(device_name)
    kernel = load_spec(HERE.parents[1] / spec).kernel  # not harvested: rank compiles it for its registers
    recorded = []
    reuse = volumes.older_wave_reuse

    def recording(*args):
        found = reuse(*args)
        recorded.append(found)
        return found

    volumes.older_wave_reuse = recording
    try:
        out = []
        for row in read_dataset(HERE / data).rows:
            launch = row.launch

            def dram_load(curve):
                dev = dataclasses.replace(device, curves={**device.curves, "older_wave_hit": curve})
                ranked = pp.rank(kernel, dev, blocks=[launch.block], folds=[launch.fold])
                return ranked.candidates[0].metrics.dram_load_bytes_per_lup

            recorded.clear()
            d0, d1 = dram_load(NO_HITS), dram_load(ALL_HITS)
            reuse_found = [pair for wave in recorded[: len(recorded) // 2] for pair in wave]
            offered = sum(b for _, b in reuse_found)
            lups = offered / (d0 - d1) if d0 > d1 else 1.0
            out.append(
                {"measured": row.values["dram_load"], "d0": d0, "reuse": [(x, b / lups) for x, b in reuse_found]}
            )
        return out
    finally:
        volumes.older_wave_reuse = reuse


def predict(rows: list[dict], hit) -> np.ndarray:
    return np.array([r["d0"] - sum(hit(x) * b for x, b in r["reuse"]) for r in rows])


def mape(rows: list[dict], hit) -> float:
    measured = np.array([r["measured"] for r in rows])
    return float(100 * np.mean(np.abs(predict(rows, hit) - measured) / measured))


def main() -> int:
    sets = {name: collect(device, spec, data) for name, device, spec, data in DATA_SETS}
    fit_on = sets[DATA_SETS[0][0]]
    measured = np.array([r["measured"] for r in fit_on])

    def residual(p):
        return (predict(fit_on, Curve(1.0, p[0], p[1], complement=True)) - measured) / measured

    sol = least_squares(residual, x0=(50.0, 4.0), bounds=([1e-3, 0.1], [1e9, 100.0]))
    b, c = (float(f"{v:.4g}") for v in sol.x)
    fitted = Curve(1.0, b, c, complement=True)
    rms = float(np.sqrt(np.mean(residual((b, c)) ** 2)))
    print(
        f"older_wave_hit fitted on {DATA_SETS[0][0]} ({len(fit_on)} candidates): a = 1, b = {b}, c = {c}, "
        f"complement = true; RMS relative residual {rms:.4f}"
    )
    print(
        "hit at ratio 0.67 / 0.8 / 0.9 / 1.0 / 1.2 / 1.5: "
        + " / ".join(f"{float(fitted(x)):.2f}" for x in (0.67, 0.8, 0.9, 1.0, 1.2, 1.5))
    )
    print("DRAM load MAPE %, the step (no curve) -> the fitted curve:")
    for name, rows in sets.items():
        step = mape(rows, lambda x: 1.0 if x <= 1.0 else 0.0)
        print(f"  {name:<22} {step:6.2f} -> {mape(rows, fitted):6.2f}" + ("  (fitted on)" if rows is fit_on else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
