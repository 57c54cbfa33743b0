"""SPEC: D3Q27's pull streaming alone (no collision) on 256^3 cells (double, fzyx), a Hopper probe.

stream1, stream7, stream19 and stream27 read and write 2, 14, 38 and 54 streams with the same accesses per
field: whether narrow blocks lose more with more streams in flight (validation/hopper/).
"""

import pystencils as ps
from lbmpy import LBStencil, Stencil

src, dst = ps.fields("src(27), dst(27): double[258, 258, 258]", layout="fzyx")
assignments = [
    ps.Assignment(dst[0, 0, 0](q), src[tuple(-c for c in direction)](q))
    for q, direction in enumerate(LBStencil(Stencil.D3Q27))
]
