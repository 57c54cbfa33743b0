"""The built-in adapter plugin for pystencils 2.x (and lbmpy, which emits pystencils kernels).

Registered through this distribution's ``pystencils_perf`` entry points like any external adapter. Its modules,
each doing one thing: `harvest` (the lowered kernel's AST as a `KernelModel`, `perf_harvest`); `expressions`
(pystencils integer expressions as sympy); `targets` (the device's vendor decides the target: CUDA for NVIDIA,
HIP for AMD); `folding` (thread folding as pystencils code generation); `apply` (regenerating a kernel for a
chosen launch, `perf_apply`, and each fold's registers from nvcc, NVRTC or hipcc, `perf_resources`); `compat`
(the pystencils internals the folding driver relies on, per version); `api`, `lbm` (``create_kernel`` and
``create_lb_kernel`` choosing their launch); `gpu`, `measure`, `tuning` (timing candidates on a CUDA GPU through
cupy). The hooks below call `harvest`'s and `apply`'s when a kernel is described or applied, so that loading the
plugin does not import pystencils.
"""

from __future__ import annotations

from ...hookspecs import hookimpl


@hookimpl
def perf_harvest(kernel, options):
    from . import harvest

    return harvest.perf_harvest(kernel, options)


@hookimpl
def perf_apply(kernel, launch, options):
    from . import apply

    return apply.perf_apply(kernel, launch, options)


@hookimpl
def perf_resources(kernel, recipe, model, folds, device):
    from . import apply

    return apply.perf_resources(kernel, recipe, model, folds, device)


@hookimpl(trylast=True)
def perf_resources_unavailable(kernel, device):
    from . import apply

    return apply.perf_resources_unavailable(kernel, device)


def __getattr__(name):
    """`ApplyOptions`, imported from `apply` when first used (PEP 562). No ``__dir__`` names it: registering
    the plugin looks up every name ``dir()`` gives, which would import pystencils."""
    if name != "ApplyOptions":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .apply import ApplyOptions

    return ApplyOptions


__all__ = ["ApplyOptions", "perf_apply", "perf_harvest", "perf_resources", "perf_resources_unavailable"]
