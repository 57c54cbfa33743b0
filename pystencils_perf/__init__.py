"""pystencils-perf: predict and choose GPU launch configurations of generated kernels.

Start with `harvest` (the kernel model of a pystencils/lbmpy kernel) and
`get_device`; the documentation (docs/, e.g. docs/cli.md for the command-line tool) says more.

The public names are imported when first used (PEP 562), so that ``import
pystencils_perf`` and the command line start without sympy, numpy or a generator.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names below are, for type checkers and editors
    from .adapters.pystencils.api import KernelChoice, create_kernel
    from .adapters.pystencils.lbm import create_lb_kernel
    from .devices import Device, get_device, list_devices
    from .errors import ConfigurationError, DeviceError, HarvestError, PerfError
    from .kernel import Access, AccessKind, Field, HarvestOptions, KernelModel, Loop
    from .launch import LaunchConfig
    from .metrics import Metrics
    from .plugins import get_plugin_manager
    from .rank import harvest, rank, select
    from .ranking import Ranking

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    "Device": ".devices",
    "get_device": ".devices",
    "list_devices": ".devices",
    "ConfigurationError": ".errors",
    "DeviceError": ".errors",
    "HarvestError": ".errors",
    "PerfError": ".errors",
    "Access": ".kernel",
    "AccessKind": ".kernel",
    "Field": ".kernel",
    "HarvestOptions": ".kernel",
    "KernelModel": ".kernel",
    "Loop": ".kernel",
    "LaunchConfig": ".launch",
    "Metrics": ".metrics",
    "get_plugin_manager": ".plugins",
    "Ranking": ".ranking",
    "harvest": ".rank",
    "rank": ".rank",
    "select": ".rank",
    "create_kernel": ".adapters.pystencils.api",
    "KernelChoice": ".adapters.pystencils.api",
    "create_lb_kernel": ".adapters.pystencils.lbm",
}

#: the submodules that ``import pystencils_perf`` bound as attributes when it imported the names above at once
_SUBMODULES = (
    "devices",
    "errors",
    "hookspecs",
    "kernel",
    "launch",
    "metrics",
    "outputs",
    "plugins",
    "predict",
    "resources",
)


def __getattr__(name):
    """A public name (or one of `_SUBMODULES`), imported when first asked for and kept here after that."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})


class _Package(ModuleType):
    """Keeps the function `rank` under its name: importing the submodule ``pystencils_perf.rank`` (as the plugin
    manager does) would bind the module to the package's attribute ``rank`` otherwise."""

    def __setattr__(self, name, value):
        if name in _PUBLIC and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
