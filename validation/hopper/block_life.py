"""Warps alive per SM by block size and fold: what a block's slowest warp and the start of the next block cost.

The held-out Hopper Jacobi 2D rows ran 18 % slower in unfolded blocks of 1024 threads than in unfolded blocks of
256 (H200, `data/jacobi2d.csv` against `jacobi2d_t256.csv`), and folded blocks of either size 4 % apart, where the
model predicts all of them alike. A block's warps start together and end one by one; if an SM frees their slots
only when its slowest warp ends, or starts a block only where a whole block's slots are free, fewer warps run than
the occupancy allows, the more so the shorter a warp lives and the more warps a block has.

This script times a hand-written 2D 5-point Jacobi sweep (the layout of `jacobi2d.py`: 16386 x 16386 doubles,
a thread's points consecutive in y as the product folds them), and a copy, by block shape and fold, then runs each
once more with every warp recording its SM, its first and last cycle (clock64, one SM's counter) and reads from
those records, per launch:

- ``live_warps_per_sm``: the warps that run at a time, averaged over each SM's time from its first to its last cycle
  (a warp runs from its first instruction to its store);
- ``block_warps_per_sm``: the same if every warp held its slot until its block's last warp ended;
- ``peak_blocks_per_sm``: the most blocks alive at once on one SM, against ``occupancy_blocks_per_sm`` (CUDA's
  occupancy calculator): more means an SM starts a block before an older one's last warp has ended;
- ``warp_cycles``, ``block_cycles``: a warp's and a block's mean life; ``start_skew_cycles`` and
  ``end_skew_cycles``: the mean spread of its warps' starts and ends.

Our own kernels; every input random; the results checked against cupy.

    python3 validation/hopper/block_life.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics

import cupy as cp
import numpy as np

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-")  # before pystencils is imported: never the home directory

from pystencils_perf.adapters.pystencils.gpu import time_launches  # noqa: E402

PRELUDE = r"""
#define RECORD_START \
    long long t_start = clock64();
#define RECORD_END \
    if (life != nullptr && (threadIdx.x + blockDim.x * threadIdx.y) % 32 == 0) { \
        long long t_end = clock64(); \
        unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm)); \
        long long warp = ((long long)(blockIdx.x + gridDim.x * blockIdx.y) * (blockDim.x * blockDim.y) \
                          + threadIdx.x + blockDim.x * threadIdx.y) / 32; \
        life[3 * warp] = t_start; life[3 * warp + 1] = t_end; life[3 * warp + 2] = sm; \
    }
"""
#: a kernel for one fold (``{fold}``) whose point ``i`` gets ``{update}``: `life` null times the launch, else every warp
#: records its life there
KERNEL = r"""
extern "C" __global__ void {name}_{fold}(const double* __restrict__ src, double* __restrict__ dst, int nx, int ny,
                                       long long* life) {
    RECORD_START
    const long pitch = nx;
    const int x = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    const int y0 = 1 + {fold} * (blockIdx.y * blockDim.y + threadIdx.y);
#pragma unroll
    for (int k = 0; k < {fold}; ++k) {
        const int y = y0 + k;
        if (x < nx - 1 && y < ny - 1) {
            const long i = y * pitch + x;
            dst[i] = {update};
        }
    }
    RECORD_END
}
"""
#: the kernels by name: what each writes to a point
UPDATES = {"jacobi": "0.25 * (src[i - 1] + src[i + 1] + src[i - pitch] + src[i + pitch])", "copy": "src[i]"}
FOLDS = (1, 2, 4)
MODULE = cp.RawModule(
    code=PRELUDE
    + "".join(
        KERNEL.replace("{name}", name).replace("{update}", update).replace("{fold}", str(f))
        for name, update in UPDATES.items()
        for f in FOLDS
    )
)
N = 16386  # the points of jacobi2d.py per axis, the outermost layer the boundary
#: (kernel, block x, block y, fold in y)
LAUNCHES = (
    *(("jacobi", bx, by, f) for bx, by in ((32, 32), (128, 8), (1024, 1), (32, 8), (128, 2), (256, 1)) for f in FOLDS),
    *(("jacobi", bx, by, f) for bx, by in ((128, 4), (128, 1), (64, 1)) for f in (1, 2)),
    *(("copy", bx, by, f) for bx, by in ((128, 8), (128, 2)) for f in (1, 2)),
)


def life_figures(records: np.ndarray, warps_per_block: int) -> dict[str, float]:
    """Warps alive and lives of one instrumented launch (`records`: start, end, SM per warp, by block)."""
    start, end, sm = (records[:, k].reshape(-1, warps_per_block) for k in range(3))
    block_start, block_end, block_sm = start.min(axis=1), end.max(axis=1), sm[:, 0]
    sms = int(block_sm.max()) + 1
    first = np.full(sms, np.iinfo(np.int64).max)
    last = np.zeros(sms, dtype=np.int64)
    np.minimum.at(first, block_sm, block_start)
    np.maximum.at(last, block_sm, block_end)
    peak = 0  # the most blocks alive at once on an SM: a sweep over its blocks' starts and ends
    for s in range(sms):
        mine = block_sm == s
        times = np.concatenate([block_start[mine], block_end[mine]])
        steps = np.concatenate([np.ones(mine.sum(), np.int64), -np.ones(mine.sum(), np.int64)])
        order = np.lexsort((steps, times))  # an end before a start at the same cycle
        peak = max(peak, int(np.cumsum(steps[order]).max()))
    sm_cycles = float((last - first).sum())
    return {
        "live_warps_per_sm": float((end - start).sum()) / sm_cycles,
        "block_warps_per_sm": float(((block_end - block_start) * warps_per_block).sum()) / sm_cycles,
        "peak_blocks_per_sm": peak,
        "warp_cycles": float((end - start).mean()),
        "block_cycles": float((block_end - block_start).mean()),
        "start_skew_cycles": float((start.max(axis=1) - block_start).mean()),
        "end_skew_cycles": float((block_end - end.min(axis=1)).mean()),
        "sm_span_cycles_mean": float((last - first).mean()),
    }


def occupancy_blocks_per_sm(kernel, threads: int) -> int | None:
    """CUDA's occupancy calculator for `kernel` (None where this cupy does not offer it)."""
    try:
        return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, 0))
    except AttributeError:
        return None


def measure(kernel_name: str, bx: int, by: int, fold: int, src, dst, reference) -> dict[str, float]:
    kernel = MODULE.get_function(f"{kernel_name}_{fold}")
    inner = N - 2
    grid = (-(-inner // bx), -(-inner // (by * fold)))
    args = (src, dst, np.int32(N), np.int32(N))
    dst.fill(np.nan)
    times = time_launches(cp, lambda: kernel(grid, (bx, by), (*args, np.uint64(0))), 3, 15)
    ok = bool(cp.allclose(dst[1:-1, 1:-1], reference))
    warps_per_block = -(-bx * by // 32)
    records = cp.zeros((grid[0] * grid[1] * warps_per_block, 3), dtype=cp.int64)
    instrumented = time_launches(cp, lambda: kernel(grid, (bx, by), (*args, records)), 1, 1)
    ms = statistics.median(times)
    return {
        "kernel": kernel_name,
        "block": [bx, by],
        "fold": fold,
        "ms": ms,
        "glups": inner * inner / ms / 1e6,
        "spread": max(times) / min(times) - 1,
        "instrumented_ms": instrumented[0],
        "correct": ok,
        "occupancy_blocks_per_sm": occupancy_blocks_per_sm(kernel, bx * by),
        **life_figures(records.get(), warps_per_block),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures here as JSON")
    args = parser.parse_args()
    props = cp.cuda.runtime.getDeviceProperties(0)
    src = cp.random.random((N, N)) + 0.5
    dst = cp.empty_like(src)
    jacobi = 0.25 * (src[1:-1, :-2] + src[1:-1, 2:] + src[:-2, 1:-1] + src[2:, 1:-1])
    references = {"jacobi": jacobi, "copy": src[1:-1, 1:-1]}
    rows = []
    print(
        f"{'kernel':7s} {'block':>9s} fold {'GLup/s':>7s} {'spread':>6s} {'instr.':>6s} ok blocks peak  live  held "
        f"warp_cyc block_cyc start_skew end_skew"
    )
    for kernel_name, bx, by, fold in LAUNCHES:
        row = measure(kernel_name, bx, by, fold, src, dst, references[kernel_name])
        rows.append(row)
        print(
            f"{kernel_name:7s} {bx:>4d}x{by:<4d} {fold:4d} {row['glups']:7.1f} {100 * row['spread']:5.1f}% "
            f"{row['ms'] / row['instrumented_ms']:6.2f} {'y' if row['correct'] else 'N'}"
            f" {row['occupancy_blocks_per_sm']!s:>6}"
            f" {row['peak_blocks_per_sm']:4d} {row['live_warps_per_sm']:5.1f} {row['block_warps_per_sm']:5.1f}"
            f" {row['warp_cycles']:8.0f} {row['block_cycles']:9.0f}"
            f" {row['start_skew_cycles']:10.0f} {row['end_skew_cycles']:8.0f}",
            flush=True,
        )
    text = json.dumps(
        {
            "device": props["name"].decode(),
            "sm_count": props["multiProcessorCount"],
            "clock_khz": props["clockRate"],
            "launches": rows,
        },
        indent=1,
    )
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
