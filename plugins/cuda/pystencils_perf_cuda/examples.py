"""Described hand-written kernels: matrix transpose and matrix-vector product.

They are the classic cases whose memory behaviour is known in advance, which
makes them checks of the estimator: see the plugin's tests and README.
"""

from __future__ import annotations

from .description import Array, CudaKernel

GLOBAL_X = "blockIdx.x * blockDim.x + threadIdx.x"
GLOBAL_Y = "blockIdx.y * blockDim.y + threadIdx.y"


def transpose(n: int = 2048, reads: str = "coalesced", dtype: str = "double") -> CudaKernel:
    """``odata = idata^T`` on n x n elements, one element per thread, x = column of the thread.

    ``reads="coalesced"``: ``odata[x][y] = idata[y][x]`` (a warp reads one row
    segment, writes down a column); ``"strided"``: ``odata[y][x] = idata[x][y]``.
    """
    if reads not in ("coalesced", "strided"):
        raise ValueError(f"reads must be 'coalesced' or 'strided', got {reads!r}")
    read, write = ("idata[y][x]", "odata[x][y]") if reads == "coalesced" else ("idata[x][y]", "odata[y][x]")
    return CudaKernel(
        name=f"transpose_{reads}_reads",
        arrays=(Array("idata", dtype, ("n", "n")), Array("odata", dtype, ("n", "n"))),
        threads=("n", "n"),
        loads=(read,),
        stores=(write,),
        indices={"x": GLOBAL_X, "y": GLOBAL_Y},
        guard="x < n && y < n",
        constants={"n": n},
    )


def matvec(rows: int = 4096, cols: int = 64, layout: str = "row") -> CudaKernel:
    """``y = A x``: one thread per row ``i`` loops over ``j``; A row-major (``"row"``) or column-major (``"column"``)."""
    if layout not in ("row", "column"):
        raise ValueError(f"layout must be 'row' or 'column', got {layout!r}")
    return CudaKernel(
        name=f"matvec_{layout}_major",
        arrays=(
            Array("A", "double", ("rows", "cols"), order="C" if layout == "row" else "F"),
            Array("x", "double", ("cols",)),
            Array("y", "double", ("rows",)),
        ),
        threads=("rows",),
        loads=("A[i][j]", "x[j]"),
        stores=("y[i]",),
        indices={"i": GLOBAL_X},
        loops={"j": (0, "cols")},
        constants={"rows": rows, "cols": cols},
        flops_per_lup=2,
    )
