"""pystencils-perf plugin: rank launch configurations of hand-written CUDA kernels from a short description.

Installing this distribution registers `adapter` in the ``pystencils_perf``
entry-point group, so ``pystencils_perf.rank(CudaKernel(...), ...)`` works.
"""

from pystencils_perf.lazy import lazy_names

#: public name -> the module that defines it
_PUBLIC = {
    "DTYPE_BYTES": ".description",
    "Array": ".description",
    "CudaKernel": ".description",
    "CudaKernelModel": ".description",
    "SharedArray": ".description",
    "from_dict": ".description",
    "load": ".description",
}


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)

__all__ = ["DTYPE_BYTES", "Array", "CudaKernel", "CudaKernelModel", "SharedArray", "from_dict", "load"]
