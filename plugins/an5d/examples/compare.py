"""Would AN5D's temporal blocking pay for a pystencils star stencil on a V100?

    python3 plugins/an5d/examples/compare.py

For a 2D (16384^2) and a 3D (512^3) radius-1 star stencil in single precision, the
problems of the AN5D paper, it prints AN5D's best predicted configuration against the
best launch `pystencils_perf.rank` predicts for the plain (one time step per sweep)
pystencils kernel, both in GFLOP/s with the stencil's own FLOP per cell.
"""

# pystencils reads its cache folder when imported: keep it out of the home directory.
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache()

import pystencils as ps  # noqa: E402

from pystencils_perf_an5d import compare  # noqa: E402


def weighted_star(src, dst, dims: int, weights: list[float]) -> ps.Assignment:
    """dst = w0 * centre + sum of w_k * the axis neighbours at distance 1 (compile-time constant weights)."""
    neighbours = []
    for axis in range(dims):
        for step in (-1, 1):
            offset = [0] * dims
            offset[axis] = step
            neighbours.append(src[tuple(offset)])
    centre = src[(0,) * dims]
    return ps.Assignment(dst[(0,) * dims], weights[0] * centre + sum(w * n for w, n in zip(weights[1:], neighbours)))


def main() -> None:
    src2, dst2 = ps.fields("src, dst: float32[16386, 16386]")
    src3, dst3 = ps.fields("src, dst: float32[514, 514, 514]")
    weights = [0.4, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16]
    for assignment in (weighted_star(src2, dst2, 2, weights), weighted_star(src3, dst3, 3, weights)):
        print(compare([assignment], "V100").report())
        print()


if __name__ == "__main__":
    main()
