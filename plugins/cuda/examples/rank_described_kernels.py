"""Rank a hand-written CUDA kernel described in TOML, and compare described variants.

    python3 plugins/cuda/examples/rank_described_kernels.py [--device V100]

Transpose with coalesced vs strided reads: 16 doubles of a half-warp in one L1
bank (16x the cycles), one 32-B sector per 8-B double (4x the sectors).
Matrix-vector product with row- vs column-major A. Needs no GPU.
"""

from __future__ import annotations

import argparse
import os

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache()

import pystencils_perf as pp  # noqa: E402
from pystencils_perf_cuda import load  # noqa: E402
from pystencils_perf_cuda.examples import matvec, transpose  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = {
    "l1_cycles_per_lup": "L1 cyc",
    "l1_requested_bytes_per_lup": "L1 req B",
    "l2_load_bytes_per_lup": "L2 ld B",
    "l2_store_bytes_per_lup": "L2 st B",
    "dram_load_bytes_per_lup": "DRAM ld B",
}


def row(label: str, kernel, block, device: str) -> str:
    m = pp.rank(kernel, device, blocks=[block], folds=[(1, 1, 1)]).best.metrics
    return f"{label:>28} {'x'.join(map(str, block)):>8} " + " ".join(f"{m.value(k):>9.4f}" for k in KEYS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="V100")
    args = parser.parse_args()

    described = load(os.path.join(HERE, "transpose.toml"))
    print(pp.harvest(described).summary(), "\n")
    print(f"{'kernel':>28} {'block':>8} " + " ".join(f"{v:>9}" for v in KEYS.values()) + "   (per update)")
    print(row("transpose.toml", described, (32, 8, 1), args.device))
    print(row("transpose, coalesced reads", transpose(2048, "coalesced"), (32, 8, 1), args.device))
    print(row("transpose, strided reads", transpose(2048, "strided"), (32, 8, 1), args.device))
    print(row("matvec, A row-major", matvec(4096, 64, "row"), (128, 1, 1), args.device))
    print(row("matvec, A column-major", matvec(4096, 64, "column"), (128, 1, 1), args.device))
    print()
    ranking = pp.rank(described, args.device)
    print("\n".join(ranking.table(head=5).splitlines()[:9]))


if __name__ == "__main__":
    main()
