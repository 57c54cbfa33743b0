"""pystencils-perf: predict and choose GPU launch configurations of generated kernels.

Start with `harvest` (the kernel model of a pystencils/lbmpy kernel) and
`get_device`; the documentation (docs/, e.g. docs/cli.md for the command-line tool) says more.
"""

from __future__ import annotations

from .devices import Device, get_device, list_devices
from .errors import ConfigurationError, DeviceError, HarvestError, PerfError
from .harvesting import harvest
from .kernel import Access, AccessKind, Field, HarvestOptions, KernelModel, Loop
from .launch import LaunchConfig
from .metrics import Metrics
from .plugins import get_plugin_manager
from .rank import Ranking, rank, select

__version__ = "0.1.0"


def __getattr__(name):
    """`create_kernel`, `create_lb_kernel` and `KernelChoice` import pystencils, so only when asked for."""
    if name in ("create_kernel", "KernelChoice"):
        from .adapters.pystencils import api

        return getattr(api, name)
    if name == "create_lb_kernel":
        from .adapters.pystencils import lbm

        return lbm.create_lb_kernel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Access",
    "AccessKind",
    "ConfigurationError",
    "create_kernel",
    "create_lb_kernel",
    "Device",
    "DeviceError",
    "Field",
    "HarvestError",
    "HarvestOptions",
    "KernelChoice",
    "KernelModel",
    "LaunchConfig",
    "Loop",
    "Metrics",
    "PerfError",
    "Ranking",
    "get_device",
    "get_plugin_manager",
    "harvest",
    "list_devices",
    "rank",
    "select",
]
