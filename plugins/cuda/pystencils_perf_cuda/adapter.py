"""The `perf_harvest` and `perf_resources` plugin for `CudaKernel` descriptions.

The descriptions (`description`, which imports sympy) are imported by the hooks,
so that loading the plugin does not import them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pystencils_perf.adapters.compilers import toolchain_for
from pystencils_perf.errors import HarvestError
from pystencils_perf.hookspecs import hookimpl
from pystencils_perf.parallel import map_on_every_core

if TYPE_CHECKING:
    from .description import CudaKernel


def _is_description(kernel) -> bool:
    """Whether `kernel` is a `CudaKernel`."""
    from .description import CudaKernel

    return isinstance(kernel, CudaKernel)


@hookimpl
def perf_harvest(kernel, options):
    return kernel.model(options) if _is_description(kernel) else None


@hookimpl
def perf_load_spec(path):
    """A TOML SPEC: a description in ``[kernel]``, for Kernel Tuner data with ``[kernel_tuner]``."""
    if not path.endswith(".toml"):
        return None
    from .description import spec_from_toml

    return spec_from_toml(path)


@hookimpl
def perf_check_candidate(model, launch, device):
    """A launch whose shared indices leave their arrays' extents describes no code (`shared_index_outside`; a kernel
    with shared arrays is never folded, `candidates.perf_check_candidate`)."""
    if not getattr(model, "shared_indices", ()) or launch.fold != (1, 1, 1):
        return None
    return model.shared_index_outside(launch.block)


def translation_unit(kernel: CudaKernel, block: tuple[int, int, int] | None = None) -> str:
    """`kernel.source` with its `defines` in front, as ``nvcc -D`` would set them, and for `block` its
    `block_size_names` (Kernel Tuner sets the block size so)."""
    path = Path(kernel.source)
    if not path.is_file():
        raise HarvestError(f"CUDA kernel {kernel.name!r}: source {kernel.source!r} is not a file")
    block_macros = dict(zip(kernel.block_size_names, block)) if block is not None else {}
    macros = "".join(f"#define {name} {value}\n" for name, value in {**kernel.defines, **block_macros}.items())
    return macros + path.read_text()


def _compiler(kernel, device):
    """What compiles a described kernel's source for `device` (``compile_source(source, function)``: its
    resources), or None (no source, no compiler): nvcc or NVRTC for an NVIDIA GPU, hipcc for an AMD one."""
    toolchain = toolchain_for(device)
    if not _is_description(kernel) or kernel.source is None or toolchain is None:
        return None
    chosen = toolchain.compiler_for(device.compute_capability)
    if chosen is None:
        return None
    compiler, arch = chosen
    return lambda source, function: toolchain.cuda_source_resources(source, function, arch, compiler)


@hookimpl
def perf_resources(kernel, recipe, model, folds, device):
    """Registers and spills of the described kernel's source (unfolded only: a description has no folded code;
    a source that takes its block size as macros is compiled per launch instead)."""
    compile_source = _compiler(kernel, device)
    if compile_source is None or kernel.block_size_names or (1, 1, 1) not in [tuple(f) for f in folds]:
        return None
    return {(1, 1, 1): compile_source(translation_unit(kernel), kernel.function or kernel.name)}


@hookimpl
def perf_resources_unavailable(kernel):
    """Why a description's registers cannot be compiled: it has no source (a missing nvcc or hipcc the ranking's
    note names itself)."""
    if _is_description(kernel) and kernel.source is None:
        return f"CUDA kernel {kernel.name!r} is a description without `source`: no code to compile"
    return None


@hookimpl
def perf_launch_resources(kernel, model, launches, device):
    """Registers and spills of the described kernel's source compiled for each block size (`block_size_names`)."""
    if _is_description(kernel) and kernel.block_size_names and kernel.source is None:
        raise HarvestError(
            f"CUDA kernel {kernel.name!r}: block_size_names {list(kernel.block_size_names)} "
            "name macros of a source, but the description gives no source"
        )
    compile_source = _compiler(kernel, device)
    if compile_source is None or not kernel.block_size_names:
        return None
    function = kernel.function or kernel.name
    unfolded = [launch for launch in launches if launch.fold == (1, 1, 1)]
    sources = [translation_unit(kernel, launch.block) for launch in unfolded]
    # each launch's code is compiled alone (the source's macros may define anything): one compiler per core
    compiled = map_on_every_core(lambda source: compile_source(source, function), sources)
    return dict(zip(unfolded, compiled))
