"""The built-in adapter plugin for pystencils 2.x (and lbmpy, which emits pystencils kernels).

Registered through this distribution's ``pystencils_perf`` entry points like
any external adapter. Its modules, each doing one thing:

- `harvest`: the lowered kernel's AST as a `KernelModel` (`perf_harvest`);
- `expressions`: pystencils integer expressions as sympy;
- `targets`: the device's vendor decides the target (CUDA for NVIDIA, HIP for AMD);
- `folding`: thread folding as pystencils code generation;
- `apply`: regenerating a kernel for a chosen launch (`perf_apply`), and each fold's
  registers from nvcc, NVRTC or hipcc (`perf_resources`);
- `compat`: the pystencils internals the folding driver relies on, per version;
- `api`, `lbm`: ``create_kernel`` and ``create_lb_kernel`` choosing their launch;
- `gpu`, `measure`: timing candidates on a CUDA GPU through cupy.
"""

from .apply import ApplyOptions, perf_apply, perf_resources
from .harvest import perf_harvest

__all__ = ["ApplyOptions", "perf_apply", "perf_harvest", "perf_resources"]
