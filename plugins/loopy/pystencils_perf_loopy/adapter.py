"""pystencils-perf adapter for loopy GPU kernels (a `perf_harvest` plugin).

The translation (`harvest`) is imported when a loopy kernel is described, so
that loading the plugin imports neither loopy nor sympy.
"""

from __future__ import annotations

from pystencils_perf.errors import HarvestError
from pystencils_perf.hookspecs import hookimpl


def loop_kernel(kernel):
    """The `LoopKernel` of a loopy translation unit or kernel, else None."""
    if not type(kernel).__module__.startswith("loopy"):
        return None
    import loopy as lp

    if isinstance(kernel, lp.TranslationUnit):
        return kernel.default_entrypoint
    return kernel if isinstance(kernel, lp.LoopKernel) else None


@hookimpl
def perf_harvest(kernel, options):
    knl = loop_kernel(kernel)
    if knl is None:
        return None
    from .harvest import Harvester

    return Harvester(knl, options).harvest()


def kernel_block(kernel) -> tuple[int, int, int]:
    """The thread block a loopy kernel was generated for: the extents of its ``l.0..l.2`` inames."""
    knl = loop_kernel(kernel)
    if knl is None:
        raise HarvestError(f"{type(kernel).__qualname__} is not a loopy kernel")
    from .harvest import Harvester

    return tuple(axis.local_extent for axis in Harvester(knl, None).axes)
