"""SPEC: D3Q15's pull streaming alone (no collision) on 256^3 cells (double, fzyx), a blind Hopper probe.

30 streams, between stream7's 14 and stream19's 38, with diagonals that D3Q19 lacks (x, y and z shifted at once),
measured after the L2 partitions' step and predicted before it (validation/hopper/README.md).
"""

import pystencils as ps
from lbmpy import LBStencil, Stencil

src, dst = ps.fields("src(15), dst(15): double[258, 258, 258]", layout="fzyx")
assignments = [
    ps.Assignment(dst[0, 0, 0](q), src[tuple(-c for c in direction)](q))
    for q, direction in enumerate(LBStencil(Stencil.D3Q15))
]
