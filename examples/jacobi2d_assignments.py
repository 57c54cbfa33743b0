"""SPEC with `assignments`: a 2D 5-point Jacobi sweep on fixed-size fields.

pystencils-perf accesses examples/jacobi2d_assignments.py
"""

import pystencils as ps

src, dst = ps.fields("src, dst: double[1026, 1026]")
assignments = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
