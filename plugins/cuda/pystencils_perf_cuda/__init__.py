"""pystencils-perf plugin: rank launch configurations of hand-written CUDA kernels from a short description.

Installing this distribution registers `adapter` in the ``pystencils_perf``
entry-point group, so ``pystencils_perf.rank(CudaKernel(...), ...)`` works.
"""

from .description import DTYPE_BYTES, Array, CudaKernel, CudaKernelModel, from_dict, load

__all__ = ["DTYPE_BYTES", "Array", "CudaKernel", "CudaKernelModel", "from_dict", "load"]
