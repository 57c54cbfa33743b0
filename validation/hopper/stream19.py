"""SPEC: D3Q19's pull streaming alone (no collision) on 256^3 cells (double, fzyx), a Hopper probe.

The D3Q19 kernel's accesses with few registers (so 64 warps per SM instead of 16): whether its 8-wide blocks
still run at half the speed of wide ones tells a memory-system effect from a latency one (validation/hopper/).
"""

import pystencils as ps
from lbmpy import LBStencil, Stencil

src, dst = ps.fields("src(19), dst(19): double[258, 258, 258]", layout="fzyx")
assignments = [
    ps.Assignment(dst[0, 0, 0](q), src[tuple(-c for c in direction)](q))
    for q, direction in enumerate(LBStencil(Stencil.D3Q19))
]
