"""Which compiler measures a kernel's registers, by GPU vendor: nvcc or NVRTC for NVIDIA, hipcc for AMD.

`cuda_compiler` and `hip_compiler` share one interface; adapters ask
`toolchain_for` instead of choosing between them, so a vendor is added here once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..resources import ResourceUsage
from . import cuda_compiler, hip_compiler


@dataclass(frozen=True)
class Toolchain:
    """One vendor's compilers: how to find one for an architecture, and what it measures of a kernel."""

    #: what messages call the compilers, e.g. "nvcc or NVRTC"
    names: str
    #: ``compiler_for(device.compute_capability)``: (compiler, architecture) or None where none is installed
    compiler_for: Callable[[str | None], tuple[object, str] | None]
    #: ``kernels_resources(kernels, arch, compiler)``: each kernel's, in order
    kernels_resources: Callable[[list, str, object], tuple[ResourceUsage, ...]]
    #: ``cuda_source_resources(source, function, arch, compiler)``: those of kernel `function` of a CUDA source (a
    #: hand-written kernel a description names)
    cuda_source_resources: Callable[[str, str, str, object], ResourceUsage]


#: the compilers of each GPU vendor (`Device.vendor`)
TOOLCHAINS = {
    "nvidia": Toolchain(
        cuda_compiler.COMPILER_NAMES,
        cuda_compiler.compiler_for,
        cuda_compiler.kernels_resources,
        cuda_compiler.compile_resources,
    ),
    "amd": Toolchain(
        hip_compiler.COMPILER_NAMES,
        hip_compiler.compiler_for,
        hip_compiler.kernels_resources,
        hip_compiler.cuda_source_resources,
    ),
}


def toolchain_for(device) -> Toolchain | None:
    """The compilers for `device`'s vendor, or None for a vendor pystencils-perf compiles nothing for."""
    return TOOLCHAINS.get(device.vendor)
