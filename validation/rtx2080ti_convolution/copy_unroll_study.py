"""A study for issue 56: the copy into shared memory as nvcc unrolls it, counted against Nsight Compute.

    python3 validation/rtx2080ti_convolution/copy_unroll_study.py

Not the product's estimate. Each thread of the convolution copies ``sh[i][j]`` for ``i = threadIdx.y; i < rows;
i += BLOCK_SIZE_Y`` and ``j = threadIdx.x; j < columns; j += BLOCK_SIZE_X``: where the block does not divide the
tile's rows or columns, the threads of one warp make different numbers of iterations. Counted iteration by
iteration (every thread at its k-th iteration runs the k-th instruction, as the kernel model unrolls its loops),
the copy's shared stores and global loads miss KTT's counters by up to 1.8x. A loop whose trip count the compiler
cannot know, unrolled by U with the remainder first (``T mod U`` single iterations, then ``T div U`` groups of U),
runs a different code path for threads whose trip counts differ modulo U: the warp issues each path's
instructions for its own threads, so a copy iteration that both paths make is issued twice, each time for part of
the warp. The table counts both ways, for several U, against the shared-store wavefronts and the global load
requests (the copy makes all of the kernel's global loads) of the rows without spills, PADDING 0.

A second table reads the store counter where no count can be wrong: blocks a whole number of warps wide (each warp
in one row of the copy, its lanes at columns congruent to its threads modulo 32, so each store is one wavefront and
each pairs with one global load: as many store wavefronts as global load requests) and tiles that divide the image
(every block makes the same copy, so each block's counts are whole numbers).
"""

from __future__ import annotations

import csv
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

COUNTERS = Path(__file__).resolve().parents[1] / "data/external/rtx2080ti_convolution15_ktt_counters.csv"
IMAGE = 4096
HALO = 14
SHARED_BANKS = 32  # 4-byte banks, every NVIDIA GPU since Maxwell (CUDA C++ Programming Guide, "Shared Memory")
WARP = 32
STORE_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SPILLS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
#: unroll factors compared; 1 is the iteration-by-iteration count (no remainder)
UNROLLS = (1, 2, 4, 8)
WITHIN = 0.10


def code_paths(trips: np.ndarray, unroll: int):
    """The copies of a loop's body in the code of a loop unrolled by `unroll`, remainder first, in the order a warp
    runs them: for each, which of the warp's threads run it (mask) and at which of their iterations."""
    remainder, groups = trips % unroll, trips // unroll
    for k in range(int(remainder.max(initial=0))):
        yield remainder > k, np.full(len(trips), k)
    for g in range(int(groups.max(initial=0))):
        for u in range(unroll):
            yield groups > g, remainder + unroll * g + u


def warp_counts(tx: np.ndarray, ty: np.ndarray, block, rows: int, columns: int, unroll: int) -> tuple[int, int]:
    """Store wavefronts and instructions (each also a global load request) of one warp's copy."""
    bx, by = block
    trips_i, trips_j = -(-(rows - ty) // by), -(-(columns - tx) // bx)
    wavefronts = instructions = 0
    for outer, i_iter in code_paths(trips_i, unroll):
        for inner, j_iter in code_paths(trips_j[outer], unroll):
            words = (ty[outer] + by * i_iter[outer])[inner] * columns + (tx[outer] + bx * j_iter)[inner]
            words = np.unique(words)
            wavefronts += int(np.bincount(words % SHARED_BANKS, minlength=SHARED_BANKS).max())
            instructions += 1
    return wavefronts, instructions


def launch_counts(bx: int, by: int, tile_x: int, tile_y: int, unroll: int) -> tuple[int, int]:
    """Store wavefronts and global load requests of a launch's copies (every block alike: the image's edge does not
    clip the copy, `convolution_shmem.py`)."""
    lanes = np.arange(bx * by)
    tx, ty = lanes % bx, lanes // bx
    rows, columns = by * tile_y + HALO, bx * tile_x + HALO
    per_block = np.sum(
        [
            warp_counts(tx[s : s + WARP], ty[s : s + WARP], (bx, by), rows, columns, unroll)
            for s in range(0, len(lanes), WARP)
        ],
        axis=0,
    )
    blocks = math.ceil(IMAGE / (bx * tile_x)) * math.ceil(IMAGE / (by * tile_y))
    return int(per_block[0]) * blocks, int(per_block[1]) * blocks


def conflict_free_store_excess(rows: list[dict]) -> list[str]:
    """The store counter over the global load requests in launches whose copy is conflict-free by construction
    (see the module's docstring): its excess, and how often a block's counts are whole numbers."""
    excess, whole_stores, whole_requests = [], 0, 0
    for r in rows:
        bx, by, tile_x, tile_y = (int(r[k]) for k in ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y"))
        if bx % WARP or IMAGE % (bx * tile_x) or IMAGE % (by * tile_y):
            continue
        blocks = int(r["grid_x"]) * int(r["grid_y"])
        stores, requests = float(r[STORE_WAVEFRONTS]) / blocks, float(r[LOAD_REQUESTS]) / blocks
        excess.append(stores / requests - 1)
        whole_stores += stores.is_integer()
        whole_requests += requests.is_integer()
    e = np.array(excess)
    return [
        f"{len(e)} rows whose copy is conflict-free by construction: store wavefronts over global load requests",
        "| median excess | 90th percentile | largest | rows over 10 % | store wavefronts per block whole | "
        "global load requests per block whole |",
        "|---|---|---|---|---|---|",
        f"| {100 * np.median(e):.1f} % | {100 * np.percentile(e, 90):.1f} % | {100 * e.max():.1f} % "
        f"| {np.sum(e > WITHIN)} | {whole_stores} | {whole_requests} |",
    ]


def main() -> int:
    with open(COUNTERS, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if int(r["PADDING"]) == 0 and not any(float(r[c]) for c in SPILLS)]
    launches = {tuple(int(r[k]) for k in ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y")) for r in rows}
    counts = {(launch, u): launch_counts(*launch, u) for launch in sorted(launches) for u in UNROLLS}
    print(
        f"{len(rows)} rows of {COUNTERS.name} without spills, PADDING 0: the copy's counts within 10 % of the counter"
    )
    print(
        "| counter | " + " | ".join("iteration by iteration" if u == 1 else f"unrolled by {u}" for u in UNROLLS) + " |"
    )
    print("|---|" + "---|" * len(UNROLLS))
    missed = Counter()
    for name, counter, which in (
        ("shared-store wavefronts", STORE_WAVEFRONTS, 0),
        ("global load requests", LOAD_REQUESTS, 1),
    ):
        cells = []
        for u in UNROLLS:
            errors = []
            for r in rows:
                launch = tuple(int(r[k]) for k in ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y"))
                errors.append(counts[launch, u][which] / float(r[counter]) - 1)
                if u == 4 and abs(errors[-1]) > WITHIN:
                    missed[name, "warps span rows" if launch[0] % WARP else "a warp in one row"] += 1
            e = np.abs(errors)
            cells.append(f"{100 * np.mean(e <= WITHIN):.1f} % (median error {100 * np.median(e):.2f} %)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("rows missed when unrolled by 4:", ", ".join(f"{n} {shape}: {k}" for (n, shape), k in sorted(missed.items())))
    print()
    print("\n".join(conflict_free_store_excess(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
