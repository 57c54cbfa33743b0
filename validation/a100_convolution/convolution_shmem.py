"""SPEC: the 15x15 convolution of Kernel Tuner's caches with shared memory (use_shmem = 1), as a CUDA description.

Described from `cache_scripts/convolution/convolution.cu` of MiloLurati/AutoTuning_AMD_vs_Nvidia_GPUs
(9a7dcca284d81c4f7c005268a7e9968d905f0b1a), read, not copied; the global accesses are those of KTT's port
(`validation/rtx2080ti_convolution/convolution_shmem.py`, whose docstring explains the copy loops and guards),
with Kernel Tuner's parameter names. ``use_padding = 1`` widens each shared row, where the block's width is no
multiple of 32, by ``(32 - (14 + block_size_x * (tile_size_x - 1))) & 31`` columns (the shared row's
`pitch`). The copy stores into the shared tile ``sh_input``; the 225 FMAs per output read it at
``sh_input[ty + yi * block_size_y + i][tx + xi * block_size_x + j]`` (`inner_loops` over the taps i, j), and a
thread loads each distinct value once. The copy's column loop runs while ``col < block_size_x * tile_size_x + 14``
(`load_loop_bounds`): nvcc unrolls it by 4 and runs what is left over first, so a warp whose threads make
different numbers of columns issues some twice, and a group at two columns at once, as KTT's counters show; its row loop is left as it is, which those
counters fit better (`validation/rtx2080ti_convolution/shared_wavefronts.md`). The shared tile's bytes set the
occupancy (`validation/shared_memory/report.md` has how the model ranks these launches). Every thread computes
all the outputs of its tile, and the guard skips only the stores outside the image (`computes_outside_guard`).
"""

from pystencils_perf_cuda import Array, CudaKernel, SharedArray

IMAGE = 4096
HALO = 14
INPUT = IMAGE + HALO

fixed_parameters = {"use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
#: useful outputs per launch (Kernel Tuner's problem_size)
lattice_updates = IMAGE * IMAGE


def kernel_for(params: dict) -> CudaKernel:
    """The description for one tile size, read_only and use_padding setting."""
    tsx, tsy = int(params["tile_size_x"]), int(params["tile_size_y"])
    read_only, padding = int(params["read_only"]), int(params["use_padding"])
    # blockDim.x is a multiple of 16 in every cache: (blockDim.x % 32) / 16 is 1 exactly where padding applies
    padding_columns = f"((32 - ({HALO} + blockDim.x * (tsx - 1)) % 32) % 32) * ((blockDim.x % 32) / 16)"
    width = f"blockDim.x * tsx + {HALO}"
    return CudaKernel(
        name=f"convolution15 shared-memory tile {tsx}x{tsy}{' read_only' if read_only else ''}"
        f"{' padded' if padding else ''}",
        arrays=(
            Array("input", "float", (INPUT * INPUT,), read_only=bool(read_only)),
            Array("output", "float", (IMAGE * IMAGE,)),
        ),
        threads=(-(-IMAGE // tsx), -(-IMAGE // tsy)),
        indices={
            "bx": "blockIdx.x * blockDim.x * tsx",
            "by": "blockIdx.y * blockDim.y * tsy",
            "row": "threadIdx.y + ci * blockDim.y",
            "col": "threadIdx.x + cj * blockDim.x",
            "x": "bx + threadIdx.x + xi * blockDim.x",
            "y": "by + threadIdx.y + yi * blockDim.y",
        },
        guard=f"x < {IMAGE} && y < {IMAGE}",
        load_guard=f"row < blockDim.y * tsy + {HALO} && by + row < {INPUT} && bx + col < {INPUT}",
        loops={"yi": (0, tsy), "xi": (0, tsx)},
        load_loops={"ci": (0, tsy + HALO), "cj": (0, tsx + HALO)},
        load_loop_bounds={"cj": f"col < blockDim.x * tsx + {HALO}"},
        loads=(f"input[(by + row) * {INPUT} + bx + col]",),
        stores=(f"output[y * {IMAGE} + x]",),
        constants={"tsx": tsx, "tsy": tsy, "padding": padding},
        shared_arrays=(
            SharedArray(
                "sh_input",
                "float",
                (f"blockDim.y * tsy + {HALO}", width),
                pitch=f"{width} + {padding_columns}" if padding else None,
            ),
        ),
        shared_stores=("sh_input[row][col]",),
        shared_loads=("sh_input[threadIdx.y + yi * blockDim.y + i][threadIdx.x + xi * blockDim.x + j]",),
        inner_loops={"i": (0, 15), "j": (0, 15)},
        flops_per_lup=2.0 * 225,
        computes_outside_guard=True,
    )
