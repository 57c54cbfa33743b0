"""pystencils-perf plugin: rank launch configurations of loopy GPU kernels.

Installing this distribution registers `adapter` in the ``pystencils_perf``
entry-point group, so ``pystencils_perf.rank(loopy_kernel, ...)`` works.
"""

from .adapter import kernel_block

__all__ = ["kernel_block"]
