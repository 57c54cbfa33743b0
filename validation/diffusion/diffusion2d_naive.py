"""SPEC: the naive 2D diffusion kernel of Kernel Tuner's diffusion tutorial, as a CUDA description.

Kernel Tuner (KernelTuner/kernel_tuner, `doc/source/diffusion.ipynb` and `diffusion_use_optparam.ipynb`,
Apache-2.0) times a 5-point diffusion step on a 4096 x 4096 float grid, one point per thread, with the block
size as its tunable parameters (`block_size_x`, `block_size_y`). Described from the tutorial, not copied: each
thread updates ``u_new[y * 4096 + x]`` from ``u`` at its point and its four neighbours, both arrays plain
``float *`` (no ``const``, no ``__restrict__``, no ``__ldg``), so on Maxwell and Pascal GP10x its loads are not
cached in L1 (`Device.global_loads_cached_in_l1`). The tutorial's interior update (``x`` and ``y`` from 1 to
4094) is the guard; copies of the tutorial that clamp the neighbours at the edge instead load the same lines
but for the edge rows, 0.05 % of the grid.
"""

from pystencils_perf_cuda import Array, CudaKernel

N = 4096

#: the interior points every launch updates
lattice_updates = (N - 2) * (N - 2)


def kernel_for(params: dict) -> CudaKernel:
    """The one description: the block size is the only tunable parameter."""
    return CudaKernel(
        name="diffusion 2D 5-point, naive",
        arrays=(Array("u", "float", (N * N,)), Array("u_new", "float", (N * N,))),
        threads=(N, N),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        guard=f"x > 0 && x < {N - 1} && y > 0 && y < {N - 1}",
        loads=(
            f"u[y * {N} + x]",
            f"u[(y - 1) * {N} + x]",
            f"u[(y + 1) * {N} + x]",
            f"u[y * {N} + x - 1]",
            f"u[y * {N} + x + 1]",
        ),
        stores=(f"u_new[y * {N} + x]",),
        flops_per_lup=7.0,
    )
