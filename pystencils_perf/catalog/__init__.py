"""Bundled kernels: the paper's applications and the usual test stencils.

Builders return lowered pystencils ``Target.CUDA`` kernels on fixed-size
fields; `domain` is always the interior size (x, y, z) in points, x fastest in
memory. They serve the CLI's examples, the tests and the benchmarks.
"""

from .stencils import box_3d_assignments, jacobi_2d, star_3d, star_3d_assignments, star_3d_recipe

__all__ = ["box_3d_assignments", "jacobi_2d", "star_3d", "star_3d_assignments", "star_3d_recipe"]
