"""The hardware metric estimator (seeds/000 sec. III), a built-in `perf_estimate` plugin.

`backend` chooses how footprints are counted: ``"enum"`` (interval enumeration,
`footprint_enum`) or ``"isl"`` (set algebra with islpy, `footprint_isl`); both
give the same counts. ``"auto"`` is enumeration, which is faster at every size
measured so far.
"""

from __future__ import annotations

from ..errors import ConfigurationError
from ..hookspecs import hookimpl
from . import footprint_enum, footprint_isl
from .volumes import estimate_volumes

BACKENDS = {"enum": footprint_enum, "isl": footprint_isl}


def get_backend(name: str):
    if name == "auto":
        return footprint_enum
    try:
        return BACKENDS[name]
    except KeyError:
        raise ConfigurationError(f"unknown footprint backend {name!r}; choose auto, {', '.join(BACKENDS)}") from None


@hookimpl
def perf_estimate(model, launch, device, options):
    metrics = estimate_volumes(model, launch.block, device, get_backend(options.backend))
    metrics["flops_per_lup"] = model.flops_per_lup
    return metrics
