"""SPEC: the 2D 5-point Jacobi sweep on 16384 x 16384 points (double), a held-out Hopper data set.

Measured after the model steps of 2026-11-26 and before any later one: it judges them blind.
"""

import pystencils as ps

src, dst = ps.fields("src, dst: double[16386, 16386]")
assignments = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
