"""The trace-driven simulation against measured run times: the A100 15x15 convolution, tile 1x1, read_only 0.

    python3 validation/tracesim/compare_a100_convolution.py [--candidates 60]

Simulates every measured block shape of `a100_convolution15_noshmem.csv` (Kernel Tuner, A100-PCIE-40GB; the
shared external data, see its README) with the description `validation/a100_convolution/convolution.py`,
and prints the rank correlation, the throughput MAPE, the measured throughput of the simulation's best as a
share of the measured best, and where the measured best ranks. About 6 s of CPU per candidate.
"""

from __future__ import annotations

import argparse
import csv
import runpy
import sys
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("tracesim-a100-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

import numpy as np  # noqa: E402
from convolution_summary import external_data  # noqa: E402
from pystencils_perf_tracesim import simulate  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.launch import LaunchConfig  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEC = HERE.parent / "a100_convolution" / "convolution.py"
DATA = external_data("a100_convolution15_noshmem.csv")
FLOPS_PER_OUTPUT = 450


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=60)
    args = parser.parse_args(argv)
    if not DATA.is_file():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    rows = [
        r for r in csv.DictReader(open(DATA)) if (r["tile_size_x"], r["tile_size_y"], r["read_only"]) == ("1", "1", "0")
    ][: args.candidates]
    model = pp.harvest(runpy.run_path(str(SPEC))["kernel_for"]({"tile_size_x": 1, "tile_size_y": 1, "read_only": 0}))
    device = pp.get_device("A100-PCIe-40GB")
    measured = np.array([float(r["GFLOP/s"]) / FLOPS_PER_OUTPUT for r in rows])
    simulated = np.array(
        [
            simulate(model, LaunchConfig((int(r["block_size_x"]), int(r["block_size_y"]), 1)), device)
            .prediction()
            .glups
            for r in rows
        ]
    )
    best = int(np.argmax(measured))
    print(
        f"{len(rows)} block shapes, measured {measured.min():.2f}-{measured.max():.2f} GLup/s, "
        f"simulated {simulated.min():.2f}-{simulated.max():.2f} GLup/s"
    )
    print(
        f"Spearman {spearman(measured, simulated):.3f}, throughput MAPE "
        f"{100 * np.mean(np.abs(simulated - measured) / measured):.1f} %, simulated best reaches "
        f"{100 * measured[int(np.argmax(simulated))] / measured[best]:.1f} % of the measured best, "
        f"measured best ({rows[best]['block_size_x']}x{rows[best]['block_size_y']}) ranks "
        f"{int((simulated >= simulated[best]).sum())} of {len(rows)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
