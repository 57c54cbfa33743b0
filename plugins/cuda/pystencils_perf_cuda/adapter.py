"""The `perf_harvest` plugin for `CudaKernel` descriptions."""

from __future__ import annotations

from pystencils_perf.hookspecs import hookimpl

from .description import CudaKernel


@hookimpl
def perf_harvest(kernel, options):
    return kernel.model(options) if isinstance(kernel, CudaKernel) else None
