"""A study for issue 56: KTT's shared-memory loads on the RTX 2080 Ti, counted by hand against Nsight Compute.

    python3 validation/rtx2080ti_convolution/shared_wavefronts_study.py

Not the product's estimate (written before the kernel model had shared loads): the count the estimator was to
make. A thread of the convolution reads ``sh[threadIdx.y + yi * BLOCK_SIZE_Y + i]
[threadIdx.x + xi * BLOCK_SIZE_X + j]`` for its tile point (xi, yi) and filter tap (i, j). Rows
``yi * BLOCK_SIZE_Y + i`` of different tile rows coincide where the block is fewer than 15 rows high (columns
alike where it is fewer than 15 wide), so a compiler that keeps each loaded value in a register loads
``distinct rows x distinct columns`` values per thread, not ``225 x TILE_SIZE_X x TILE_SIZE_Y``. Every load shifts
all lanes of a warp by one offset, so each costs the same wavefronts per warp: the busiest of 32 banks of 4 B
(`warp_wavefronts`). Their product over the grid is the counter
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``, which the table prints the agreement with, by padding
and for both loads counts, over the rows without spills.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

import numpy as np

COUNTERS = Path(__file__).resolve().parents[1] / "data/external/rtx2080ti_convolution15_ktt_counters.csv"
FILTER = 15
HALO = FILTER - 1
SHARED_BANKS = 32  # 4-byte banks, every NVIDIA GPU since Maxwell (CUDA C++ Programming Guide, "Shared Memory")
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SPILL_LOADS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
WITHIN = 0.10


def row_pitch_words(block_x: int, tile_x: int, padding: int) -> int:
    """Words per shared row: the tile and its halo, and with PADDING Kernel Tuner's padding columns (KTT may pad
    otherwise: the padded rows disagree, see the table)."""
    width = block_x * tile_x + HALO
    if padding and block_x % 32 and (width - block_x) % 32:
        width += (32 - (HALO + block_x * tile_x - block_x)) & 31
    return width


def warp_wavefronts(block_x: int, block_y: int, pitch: int) -> int:
    """Wavefronts of one shared load over a block's warps: per warp, the most distinct words one bank holds."""
    lanes = np.arange(block_x * block_y)
    words = (lanes // block_x) * pitch + lanes % block_x
    total = 0
    for start in range(0, len(words), 32):
        warp = np.unique(words[start : start + 32])
        total += int(np.bincount(warp % SHARED_BANKS, minlength=SHARED_BANKS).max())
    return total


def distinct_offsets(block: int, tile: int) -> int:
    """How many of ``t * block + f`` (tile point t, filter tap f) differ."""
    return len({t * block + f for t in range(tile) for f in range(FILTER)})


def main() -> int:
    agreement: Counter = Counter()
    kept_errors = []  # |kept / measured - 1| where it holds, without padding
    rows = 0
    with open(COUNTERS, newline="") as fh:
        for row in csv.DictReader(fh):
            if float(row[SPILL_LOADS]) > 0:
                continue
            bx, by, tx, ty, padding = (
                int(row[k]) for k in ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "PADDING")
            )
            per_load = (
                int(row["grid_x"]) * int(row["grid_y"]) * warp_wavefronts(bx, by, row_pitch_words(bx, tx, padding))
            )
            measured = float(row[WAVEFRONTS])
            kept = per_load * distinct_offsets(by, ty) * distinct_offsets(bx, tx)
            reloaded = per_load * FILTER * FILTER * tx * ty
            if abs(kept / measured - 1) <= WITHIN:
                which = "each value loaded once"
                if not padding:
                    kept_errors.append(abs(kept / measured - 1))
            elif abs(reloaded / measured - 1) <= WITHIN:
                which = "every tap loaded"
            else:
                which = "neither"
            agreement[(padding, which)] += 1
            rows += 1
    print(f"{rows} rows without spills of {COUNTERS.name}; shared-load wavefronts within {WITHIN:.0%} of the counter:")
    print("| PADDING | each value loaded once | every tap loaded | neither |")
    print("|---|---|---|---|")
    for padding in (0, 1):
        total = sum(n for (p, _), n in agreement.items() if p == padding)
        cells = [agreement[(padding, w)] for w in ("each value loaded once", "every tap loaded", "neither")]
        print(f"| {padding} | " + " | ".join(f"{n} ({100 * n / total:.1f} %)" for n in cells) + " |")
    print(
        f"PADDING 0, each value loaded once: error median {100 * np.median(kept_errors):.2f} %, "
        f"max {100 * max(kept_errors):.2f} %"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
