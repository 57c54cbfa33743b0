"""The built-in estimator plugin: the enumeration and ISL footprint backends (`perf_footprint_backends`), and the
hardware metrics of a candidate (`perf_estimate`, `volumes.estimate_volumes`)."""

from __future__ import annotations

import importlib

from ..errors import ConfigurationError
from ..hookspecs import hookimpl


class LazyBackend:
    """A footprint backend module imported when first used: listing the backends (the command line's choices)
    loads neither numpy nor islpy."""

    def __init__(self, module: str):
        self.module = module

    def __getattr__(self, name: str):  # only for names not resolved yet: each is kept on the object
        value = getattr(importlib.import_module(self.module), name)
        setattr(self, name, value)
        return value


def footprint_backends() -> dict:
    """Every footprint backend the installed plugins offer, by name, ``"auto"`` first."""
    from ..plugins import get_plugin_manager  # a plugin asks the others for theirs

    backends = {}
    for offered in get_plugin_manager().hook.perf_footprint_backends():
        backends.update(offered or {})
    return {"auto": backends["enum"], **backends}


def get_backend(name: str):
    backends = footprint_backends()
    try:
        return backends[name]
    except KeyError:
        raise ConfigurationError(f"unknown footprint backend {name!r}; choose {', '.join(backends)}") from None


#: the built-in backends, one object each: what is cached for a backend is kept under its identity
BUILT_IN_BACKENDS = {
    "enum": LazyBackend(f"{__package__}.footprint_enum"),
    "isl": LazyBackend(f"{__package__}.footprint_isl"),
}


@hookimpl
def perf_footprint_backends():
    return dict(BUILT_IN_BACKENDS)


@hookimpl(trylast=True)
def perf_estimate(model, launch, device, options):
    from .volumes import estimate_volumes

    return estimate_volumes(model, launch.block, device, get_backend(options.backend))
