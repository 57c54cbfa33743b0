"""pystencils-perf plugin: rank launch configurations of hand-written CUDA kernels from a short description.

Installing this distribution registers `adapter` in the ``pystencils_perf``
entry-point group, so ``pystencils_perf.rank(CudaKernel(...), ...)`` works.
"""

import importlib

#: public name -> the module that defines it
_PUBLIC = {
    "DTYPE_BYTES": ".description",
    "Array": ".description",
    "CudaKernel": ".description",
    "CudaKernelModel": ".description",
    "from_dict": ".description",
    "load": ".description",
}


def __getattr__(name):
    """A public name, imported from its module when first used (PEP 562): the plugin (`adapter`) loads without sympy."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})


__all__ = ["DTYPE_BYTES", "Array", "CudaKernel", "CudaKernelModel", "from_dict", "load"]
