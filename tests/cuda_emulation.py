"""Run a generated CUDA kernel on the CPU: its C code compiled as C++ with g++, every thread in turn.

The kernels under test have independent points (pystencils checks that), so
running the threads one after another computes what the GPU computes. This
checks the arithmetic of folded code where no GPU is available.
"""

import ctypes
import math
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

_HARNESS = """
#include <cmath>
#include <cstdint>
struct Dim3 {{ int64_t x, y, z; }};
static Dim3 threadIdx, blockIdx, blockDim;
#define __global__
#define RESTRICT __restrict__

{code}

extern "C" void launch(void **args, const int64_t *grid, const int64_t *block) {{
  blockDim = Dim3{{block[0], block[1], block[2]}};
  for (blockIdx.z = 0; blockIdx.z < grid[2]; ++blockIdx.z)
  for (blockIdx.y = 0; blockIdx.y < grid[1]; ++blockIdx.y)
  for (blockIdx.x = 0; blockIdx.x < grid[0]; ++blockIdx.x)
  for (threadIdx.z = 0; threadIdx.z < block[2]; ++threadIdx.z)
  for (threadIdx.y = 0; threadIdx.y < block[1]; ++threadIdx.y)
  for (threadIdx.x = 0; threadIdx.x < block[0]; ++threadIdx.x)
    {name}({args});
}}
"""


def field_arrays(kernel, seed=0):
    """Random arrays with exactly the strides of the kernel's fixed-size fields."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for f in sorted(kernel.get_fields(), key=lambda f: f.name):
        itemsize = np.dtype(str(f.dtype)).itemsize
        flat = rng.random(math.prod(f.shape)).astype(str(f.dtype))
        strides = tuple(int(s) * itemsize for s in f.strides)
        arrays[f.name] = np.lib.stride_tricks.as_strided(flat, tuple(f.shape), strides)
    return arrays


def run_emulated(kernel, arrays, workdir) -> None:
    """Launch `kernel` (a pystencils GpuKernel on fixed-size fields) over its whole grid on `arrays`, in place."""
    from pystencils.codegen.properties import FieldBasePtr

    casts, pointers = [], []
    for i, p in enumerate(kernel.parameters):
        pointer = p.get_properties(FieldBasePtr)
        if len(pointer) != 1:
            raise ValueError(f"emulation supports field pointers only, not {p.name}")
        casts.append(f"({re.sub(r'RESTRICT const$', '', str(p.dtype))})args[{i}]")
        pointers.append(arrays[pointer.pop().field.name].ctypes.data)
    source = _HARNESS.format(code=kernel.get_c_code(), name=kernel.name, args=", ".join(casts))
    work = Path(tempfile.mkdtemp(dir=workdir))
    (work / "kernel.cpp").write_text(source)
    subprocess.run(
        ["g++", "-O1", "-shared", "-fPIC", "-o", str(work / "kernel.so"), str(work / "kernel.cpp")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    block, grid = kernel.get_launch_configuration().evaluate()
    lib = ctypes.CDLL(str(work / "kernel.so"))
    args = (ctypes.c_void_p * len(pointers))(*pointers)
    lib.launch(args, (ctypes.c_int64 * 3)(*grid), (ctypes.c_int64 * 3)(*block))
