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


def translation_unit(kernel: CudaKernel) -> str:
    """`kernel.source` with its `defines` in front, as ``nvcc -D`` would set them."""
    path = Path(kernel.source)
    if not path.is_file():
        raise HarvestError(f"CUDA kernel {kernel.name!r}: source {kernel.source!r} is not a file")
    macros = "".join(f"#define {name} {value}\n" for name, value in kernel.defines.items())
    return macros + path.read_text()


@hookimpl
def perf_resources(kernel, recipe, model, folds, device):
    """Registers and spills of the described kernel's source (unfolded only: a description has no folded code)."""
    if not isinstance(kernel, CudaKernel) or kernel.source is None or device.vendor != "nvidia":
        return None
    chosen = compiler_for(device.compute_capability)
    if chosen is None or (1, 1, 1) not in [tuple(f) for f in folds]:
        return None
    compiler, arch = chosen
    return {(1, 1, 1): compile_resources(translation_unit(kernel), kernel.function or kernel.name, arch, compiler)}
