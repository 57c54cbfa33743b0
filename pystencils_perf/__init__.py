"""pystencils-perf: predict and choose GPU launch configurations of generated kernels.

Start with `harvest` (the kernel model of a pystencils/lbmpy kernel) and
`get_device`; see the README for the command-line tool.
"""

from __future__ import annotations

from .devices import Device, get_device, list_devices
from .errors import ConfigurationError, DeviceError, HarvestError, PerfError
from .kernel import Access, AccessKind, Field, HarvestOptions, KernelModel, Loop
from .launch import LaunchConfig
from .plugins import get_plugin_manager

__version__ = "0.1.0"

from .rank import Ranking, rank, select  # noqa: E402  (needs harvest below at call time)


def __getattr__(name):
    """`create_kernel` and `KernelChoice` import pystencils, so only when asked for."""
    if name in ("create_kernel", "KernelChoice"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def harvest(kernel, *, domain_shape=None, align="base", field_strides=None, base_offsets_bytes=None) -> KernelModel:
    """The `KernelModel` of a generator's kernel, from the first adapter plugin that recognises it."""
    if isinstance(kernel, KernelModel):
        return kernel
    options = HarvestOptions(
        domain_shape=tuple(domain_shape) if domain_shape is not None else None,
        align=align,
        field_strides=dict(field_strides or {}),
        base_offsets_bytes=dict(base_offsets_bytes or {}),
    )
    model = get_plugin_manager().hook.perf_harvest(kernel=kernel, options=options)
    if model is None:
        raise HarvestError(
            f"no adapter plugin recognises a {type(kernel).__module__}.{type(kernel).__qualname__}; "
            "pass a pystencils GPU kernel, pystencils assignments, or install an adapter plugin"
        )
    return model


__all__ = [
    "Access",
    "AccessKind",
    "ConfigurationError",
    "create_kernel",
    "Device",
    "DeviceError",
    "Field",
    "HarvestError",
    "HarvestOptions",
    "KernelChoice",
    "KernelModel",
    "LaunchConfig",
    "Loop",
    "PerfError",
    "Ranking",
    "get_device",
    "get_plugin_manager",
    "harvest",
    "list_devices",
    "rank",
    "select",
]
