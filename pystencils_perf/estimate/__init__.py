"""The hardware metric estimator (Ernst et al., JPDC 2023, sec. III), a built-in `perf_estimate` plugin.

`backend` chooses how footprints are counted: ``"enum"`` (interval enumeration,
`footprint_enum`) or ``"isl"`` (set algebra with islpy, `footprint_isl`); both
give the same counts. ``"auto"`` is enumeration, which is faster at every size
measured so far. Plugins may offer further backends (`perf_footprint_backends`).
"""

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
    from ..plugins import get_plugin_manager

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
BUILT_IN_BACKENDS = {"enum": LazyBackend(f"{__name__}.footprint_enum"), "isl": LazyBackend(f"{__name__}.footprint_isl")}


@hookimpl
def perf_footprint_backends():
    return dict(BUILT_IN_BACKENDS)


@hookimpl(trylast=True)
def perf_estimate(model, launch, device, options):
    from .volumes import estimate_volumes

    return estimate_volumes(model, launch.block, device, get_backend(options.backend))
