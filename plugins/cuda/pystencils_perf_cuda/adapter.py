"""The `perf_harvest` and `perf_resources` plugin for `CudaKernel` descriptions."""

from __future__ import annotations

from pathlib import Path

from pystencils_perf.adapters.cuda_compiler import compile_resources, compiler_for
from pystencils_perf.errors import HarvestError
from pystencils_perf.hookspecs import hookimpl

from .description import CudaKernel, spec_from_toml


@hookimpl
def perf_harvest(kernel, options):
    return kernel.model(options) if isinstance(kernel, CudaKernel) else None


@hookimpl
def perf_load_spec(path):
    """A TOML SPEC: a description in ``[kernel]``, for Kernel Tuner data with ``[kernel_tuner]``."""
    return spec_from_toml(path) if path.endswith(".toml") else None


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
    """The compiler and architecture for a described kernel with a source, or None (no source, no compiler)."""
    if not isinstance(kernel, CudaKernel) or kernel.source is None or device.vendor != "nvidia":
        return None
    return compiler_for(device.compute_capability)


@hookimpl
def perf_resources(kernel, recipe, model, folds, device):
    """Registers and spills of the described kernel's source (unfolded only: a description has no folded code;
    a source that takes its block size as macros is compiled per launch instead)."""
    chosen = _compiler(kernel, device)
    if chosen is None or kernel.block_size_names or (1, 1, 1) not in [tuple(f) for f in folds]:
        return None
    compiler, arch = chosen
    return {(1, 1, 1): compile_resources(translation_unit(kernel), kernel.function or kernel.name, arch, compiler)}


@hookimpl
def perf_launch_resources(kernel, model, launches, device):
    """Registers and spills of the described kernel's source compiled for each block size (`block_size_names`)."""
    if isinstance(kernel, CudaKernel) and kernel.block_size_names and kernel.source is None:
        raise HarvestError(f"CUDA kernel {kernel.name!r}: block_size_names {list(kernel.block_size_names)} "
                           "name macros of a source, but the description gives no source")
    chosen = _compiler(kernel, device)
    if chosen is None or not kernel.block_size_names:
        return None
    compiler, arch = chosen
    function = kernel.function or kernel.name
    return {launch: compile_resources(translation_unit(kernel, launch.block), function, arch, compiler)
            for launch in launches if launch.fold == (1, 1, 1)}
