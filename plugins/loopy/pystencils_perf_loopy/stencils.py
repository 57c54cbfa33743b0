"""The catalog's stencils written in loopy, split for one thread block.

They mirror `pystencils_perf.catalog.jacobi_2d` and ``star_3d(1, ...)``: the
same double-precision arrays with one ghost layer, x fastest in memory, so
that their harvested models can be compared with the pystencils ones.
"""

from __future__ import annotations

import numpy as np


def _split(knl, block, inames, fold=(1, 1, 1)):
    """Split every iname into ``g.N`` x ``l.N`` of the block, after an unrolled inner iname where folded."""
    import loopy as lp

    for axis, (iname, threads, f) in enumerate(zip(inames, block, fold)):
        if f > 1:
            knl = lp.split_iname(knl, iname, f, inner_iname=f"{iname}_fold", inner_tag="unr")
            iname = f"{iname}_outer"
        knl = lp.split_iname(knl, iname, threads, outer_tag=f"g.{axis}", inner_tag=f"l.{axis}")
    return knl


def jacobi_2d(domain=(64, 64), block=(16, 16, 1), *, fold=(1, 1, 1)):
    """The 2D 5-point Jacobi sweep ``dst = (W + E + S + N) / 4`` on (nx, ny) interior points."""
    import loopy as lp

    nx, ny = domain
    shape = (ny + 2, nx + 2)
    knl = lp.make_kernel(
        "{[i, j]: 0 <= i < nx and 0 <= j < ny}",
        "dst[j + 1, i + 1] = (src[j + 1, i] + src[j + 1, i + 2] + src[j, i + 1] + src[j + 2, i + 1]) / 4",
        [lp.GlobalArg("src", np.float64, shape=shape), lp.GlobalArg("dst", np.float64, shape=shape), ...],
        target=lp.CudaTarget(),
        name="jacobi_2d",
        lang_version=(2018, 2),
    )
    knl = lp.fix_parameters(knl, nx=nx, ny=ny)
    return _split(knl, block[:2], ("i", "j"), fold[:2])


def star_3d7(domain=(32, 16, 8), block=(8, 4, 2), *, fold=(1, 1, 1), coefficient=0.25):
    """The 3D 7-point star ``dst = coefficient * (centre + 6 neighbours)`` on (nx, ny, nz) interior points."""
    import loopy as lp

    nx, ny, nz = domain
    shape = (nz + 2, ny + 2, nx + 2)
    points = ["src[k+1, j+1, i+1]"] + [
        f"src[k+1{dk:+d}, j+1{dj:+d}, i+1{di:+d}]"
        for di, dj, dk in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))
    ]
    knl = lp.make_kernel(
        "{[i, j, k]: 0 <= i < nx and 0 <= j < ny and 0 <= k < nz}",
        f"dst[k+1, j+1, i+1] = {coefficient} * ({' + '.join(points)})",
        [lp.GlobalArg("src", np.float64, shape=shape), lp.GlobalArg("dst", np.float64, shape=shape), ...],
        target=lp.CudaTarget(),
        name="star3d_7pt",
        lang_version=(2018, 2),
    )
    knl = lp.fix_parameters(knl, nx=nx, ny=ny, nz=nz)
    return _split(knl, block, ("i", "j", "k"), fold)
