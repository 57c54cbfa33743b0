"""Applying a chosen launch to pystencils: regenerate the kernel with its block size and folding."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ConfigurationError
from .folding import create_folded_kernel
from .targets import target_for


def is_pystencils_kernel(obj) -> bool:
    """pystencils assignments (also as `ApplyOptions`) or a kernel pystencils generated (lbmpy's included)."""
    if isinstance(obj, ApplyOptions):
        return True
    if type(obj).__module__.split(".")[0] not in ("pystencils", "lbmpy", "builtins"):
        return False  # another generator's kernel: pystencils is not imported for it
    from pystencils.codegen.kernel import GpuKernel

    return isinstance(obj, GpuKernel) or is_assignments(obj)


def is_assignments(obj) -> bool:
    """pystencils assignments: an `AssignmentCollection` or a non-empty list of `Assignment`."""
    import pystencils as ps

    if isinstance(obj, ps.AssignmentCollection):
        return True
    return isinstance(obj, (list, tuple)) and len(obj) > 0 and all(isinstance(a, ps.Assignment) for a in obj)


@dataclass(frozen=True)
class ApplyOptions:
    """How to regenerate a pystencils kernel for another launch (the `options` of `perf_apply`).

    A ``GpuKernel`` fixes its block size (``gpu.default_block_size``) and its
    thread mapping at generation, so applying a launch means generating anew
    from the same assignments and configuration. Passed where a kernel is
    expected (`rank`, a SPEC's ``kernel``), it is generated with its
    configuration, and every fold can be compiled for its registers.
    """

    assignments: object
    config: object = None


def perf_apply(kernel, launch, options):
    """The kernel regenerated with `launch`'s block size and thread folding."""
    from pystencils.codegen.kernel import GpuKernel

    if not isinstance(kernel, GpuKernel):
        return None
    if not isinstance(options, ApplyOptions):
        raise ConfigurationError(
            f"kernel {kernel.name!r}: applying {launch.label} regenerates it; pass "
            "ApplyOptions(assignments, config) or use pystencils_perf.create_kernel"
        )
    return create_folded_kernel(options.assignments, options.config, fold=launch.fold, block=launch.block)


def perf_resources_unavailable(kernel, device):
    """Why no plugin compiled `kernel` for `device`: pystencils code generated for another target than `device`
    runs (it cannot be retargeted without its assignments), no compiler that builds for `device`, or, with one
    installed, a kernel no plugin compiles. Called after the other plugins (`trylast`), which know their own
    kernels."""
    from ...vendors import VENDORS
    from ..compilers import toolchain_for
    from .targets import target_name

    if is_pystencils_kernel(kernel) and device.vendor in VENDORS:  # pystencils is imported only after
        from pystencils.codegen.kernel import GpuKernel

        wanted = target_for(device)
        if isinstance(kernel, GpuKernel) and kernel.target != wanted:
            return (
                f"kernel {kernel.name!r} is {target_name(kernel.target)} code, and {device.name}, an "
                f"{VENDORS[device.vendor].name} GPU, runs {target_name(wanted)} code"
            )
    toolchain = toolchain_for(device)
    if toolchain is None:
        return f"pystencils-perf compiles for no GPU of vendor {device.vendor!r}"
    chosen = toolchain.compiler_for(device.compute_capability)
    if chosen is None:
        return VENDORS[device.vendor].compiler_hint
    compiler, arch = chosen
    return f"{compiler.name} builds {arch}, but no plugin compiles this kernel"


def perf_resources(kernel, recipe, model, folds, device):
    """Each fold's registers, spills and shared memory from the device vendor's compiler (nvcc or NVRTC for
    NVIDIA, hipcc for AMD), where one is installed; each fold is generated for the device's target."""
    from pystencils.codegen.kernel import GpuKernel

    from ..compilers import toolchain_for

    toolchain = toolchain_for(device)
    chosen = toolchain.compiler_for(device.compute_capability) if toolchain else None
    if chosen is None:
        return None
    if recipe is None and is_assignments(kernel):
        recipe = ApplyOptions(kernel)
    elif recipe is None and isinstance(kernel, ApplyOptions):
        recipe = kernel
    if not isinstance(recipe, ApplyOptions) and not isinstance(kernel, GpuKernel):
        return None
    compiler, arch = chosen
    variants = {}
    for fold in folds:
        if isinstance(recipe, ApplyOptions):
            variants[tuple(fold)] = create_folded_kernel(recipe.assignments, recipe.config, fold=fold, device=device)
        elif tuple(fold) == tuple(model.fold) and kernel.target == target_for(device):
            variants[tuple(fold)] = kernel
        # else: a generated kernel cannot be folded, nor retargeted, without its assignments
    return dict(zip(variants, toolchain.kernels_resources(list(variants.values()), arch, compiler)))
