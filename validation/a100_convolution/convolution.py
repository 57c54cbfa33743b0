"""SPEC: the 15x15 convolution of Kernel Tuner's A100 cache, without shared memory, as a CUDA description.

Described from `cache_scripts/convolution/convolution.cu` of MiloLurati/AutoTuning_AMD_vs_Nvidia_GPUs
(9a7dcca284d81c4f7c005268a7e9968d905f0b1a), read, not copied: a 4096 x 4096 float image, input
4110 x 4110 (the image plus a 14-point border), filter weights in constant memory (`use_cmem = 1`,
no global loads). Each thread computes tile_size_x x tile_size_y outputs strided by the block size,
``x = blockIdx.x * block_size_x * tile_size_x + threadIdx.x + xi * block_size_x`` (y alike), and for
each reads the 15 x 15 window ``input[(y + i) * 4110 + x + j]``: 225 FMAs (450 flops) per output.
The loops are fully unrolled. ``read_only = 1`` loads through ``__ldg`` (the read-only path).
Guards exist only where the tile does not divide the image (the source's ``#if image % (block * tile)
!= 0``, here `guarded_when`): then each tile point's store runs under ``x < 4096 && y < 4096`` and
its loads under ``x < 4110 && y < 4110``, each tile point under its own condition, so nvcc loads a
value that two tile points share twice. Without guards the shared values are loaded once. Checked on
the PTX of our own re-implementation, `convolution.cu`: tile 1x4 has 270 global loads in block 64x1
(unguarded) and 900 in block 48x1 (guarded):
``nvcc -ptx -arch=sm_80 -Dblock_size_x=64 -Dblock_size_y=1 -Dtile_size_x=1 -Dtile_size_y=4 -Dread_only=0
-o - convolution.cu | grep -c ld.global``.

Registers and spills come per launch from the compiler's report on the caches' own kernel
(`validation/data/external/convolution15_registers_sm_XY.csv`, read by the `CompiledRegisters`
plugin of `validation/convolution_summary.py`, which the validation scripts register): Kernel Tuner
compiled every configuration with its block size as a macro, so each launch ran its own code, with
32 to 255 registers and up to 21 kB of spills per thread. Our own `convolution.cu` compiles to other
counts (for 4x4 tiles in blocks of 16 and more rows 32-72 registers, where the cache's launches of
288 threads and more failed), so it is not given as `source` here. Without that plugin (`pystencils-perf
validate` from the command line) occupancy follows from the thread count alone.

`kernel_for(params)` is what `pystencils-perf validate` calls per combination of the tunable
parameters that are not the block size; `fixed_parameters` selects the rows of the cache it describes.
"""

from pystencils_perf_cuda import Array, CudaKernel

IMAGE = 4096
FILTER = 15
INPUT = IMAGE + FILTER - 1

#: the cache also holds the shared-memory variant (use_shmem = 1), which this description is not
fixed_parameters = {"use_shmem": 0, "use_padding": 0, "use_cmem": 1, "filter_height": FILTER, "filter_width": FILTER}
#: useful outputs per launch (Kernel Tuner's problem_size), for throughput in lattice updates per second
lattice_updates = IMAGE * IMAGE


def kernel_for(params: dict) -> CudaKernel:
    """The description for one tile size and read_only setting."""
    tsx, tsy = int(params["tile_size_x"]), int(params["tile_size_y"])
    window = tuple(f"input[(y + {i}) * {INPUT} + x + {j}]" for i in range(FILTER) for j in range(FILTER))
    return CudaKernel(
        name=f"convolution15 tile {tsx}x{tsy}{' read_only' if int(params['read_only']) else ''}",
        arrays=(
            Array("input", "float", (INPUT * INPUT,), read_only=bool(int(params["read_only"]))),
            Array("output", "float", (IMAGE * IMAGE,)),
        ),
        threads=(-(-IMAGE // tsx), -(-IMAGE // tsy)),  # grid = ceil(IMAGE / (block * tile)), as Kernel Tuner's grid_div
        indices={
            "x": "blockIdx.x * blockDim.x * tsx + threadIdx.x + xi * blockDim.x",
            "y": "blockIdx.y * blockDim.y * tsy + threadIdx.y + yi * blockDim.y",
        },
        guard=f"x < {IMAGE} && y < {IMAGE}",
        load_guard=f"x < {INPUT} && y < {INPUT}",
        guarded_when=f"{IMAGE} % (blockDim.x * tsx) != 0 || {IMAGE} % (blockDim.y * tsy) != 0",
        loops={"yi": (0, tsy), "xi": (0, tsx)},
        loads=window,
        stores=(f"output[y * {IMAGE} + x]",),
        constants={"tsx": tsx, "tsy": tsy},
        flops_per_lup=2.0 * FILTER * FILTER,
    )
