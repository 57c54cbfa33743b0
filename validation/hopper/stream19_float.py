"""SPEC: D3Q19's pull streaming alone in single precision on 256^3 cells (float, fzyx), a blind Hopper probe.

Half of stream19's bytes: its waves of 512-thread blocks take about the L2 (stream19's take 1.9 times it), where
the halos that neighbouring blocks share start to miss a partitioned L2 (validation/hopper/README.md).
"""

import pystencils as ps
from lbmpy import LBStencil, Stencil

src, dst = ps.fields("src(19), dst(19): float32[258, 258, 258]", layout="fzyx")
assignments = [
    ps.Assignment(dst[0, 0, 0](q), src[tuple(-c for c in direction)](q))
    for q, direction in enumerate(LBStencil(Stencil.D3Q19))
]
