"""Plugin hooks for `TunableKernel`: harvest the kernel it wraps, apply a launch as kernel_tuner parameters."""

from __future__ import annotations

from pystencils_perf.errors import HarvestError
from pystencils_perf.hookspecs import hookimpl
from pystencils_perf.plugins import get_plugin_manager

from .pruning import TunableKernel


@hookimpl
def perf_harvest(kernel, options):
    if not isinstance(kernel, TunableKernel):
        return None
    model = get_plugin_manager().hook.perf_harvest(kernel=kernel.kernel, options=options)
    if model is None:
        raise HarvestError(f"no adapter plugin recognises the tuned kernel, a {type(kernel.kernel).__qualname__}")
    return model


@hookimpl
def perf_apply(kernel, launch, options):
    """The kernel_tuner parameters (block sizes, foldings) of `launch`."""
    return kernel.space.params(launch) if isinstance(kernel, TunableKernel) else None
