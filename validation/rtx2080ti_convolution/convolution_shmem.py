"""SPEC: KTT's shared-memory 15x15 convolution (global and shared accesses), as a CUDA description.

Described from `Examples/KernelTunerConvolution/KernelTunerConvolution.cu` of HiPerCoRe/KTT
(931c41570df4ae279a2fb1d422be781728b39bed, MIT), read, not copied: a 4096 x 4096 float image,
input 4110 x 4110 (the image plus a 7-point border on each side). Each block first copies the input
its tile needs, ``(BLOCK_SIZE_Y * TILE_SIZE_Y + 14) x (BLOCK_SIZE_X * TILE_SIZE_X + 14)`` values from
``(blockIdx.y * BLOCK_SIZE_Y * TILE_SIZE_Y, blockIdx.x * BLOCK_SIZE_X * TILE_SIZE_X)`` on, into shared
memory: ``for (i = ty; i < rows; i += BLOCK_SIZE_Y) for (j = tx; j < columns; j += BLOCK_SIZE_X)``
(`load_loops` ``ci``, ``cj`` with the bounds in `load_guard`). Then each thread computes its tile of
outputs from shared memory and stores them strided by the block size, as in the A100 convolution.
Where the tile does not divide the image (the source's ``#if``), the copy also checks the input's
edge and the stores the image's; where it does, those conditions hold anyway (a block's copy ends at
most at row and column 4096 + 14), so `load_guard` and `guard` state them for every block size.

The copy stores into the shared tile ``sh``, and the 225 FMAs per output read it at
``sh[ty + yi * BLOCK_SIZE_Y + i][tx + xi * BLOCK_SIZE_X + j]`` (`inner_loops` over the taps i, j), each distinct
value once per thread. PADDING = 1 pads KTT's shared rows by a rule that is not Kernel Tuner's
(`shared_wavefronts.md`), so only PADDING = 0 is described. The shared tile's bytes set the occupancy; they equal
KTT's ``shared_mem_bytes`` column in every row. `validation/shared_memory/report.md` checks the shared wavefronts
against the 2080 Ti's counters and ranks the launches.
"""

from pystencils_perf_cuda import Array, CudaKernel, SharedArray

IMAGE = 4096
HALO = 14
INPUT = IMAGE + HALO

#: the KTT export names the block size in capitals
block_parameters = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y")
#: useful outputs per launch
lattice_updates = IMAGE * IMAGE
#: PADDING = 1 adds shared-memory columns the description does not count; the global accesses are the same
fixed_parameters = {"PADDING": 0}


def kernel_for(params: dict) -> CudaKernel:
    """The description for one tile size and READ_ONLY setting (PADDING does not touch global memory)."""
    tsx, tsy = int(params["TILE_SIZE_X"]), int(params["TILE_SIZE_Y"])
    return CudaKernel(
        name=f"convolution15 shared-memory tile {tsx}x{tsy}{' read_only' if int(params['READ_ONLY']) else ''}",
        arrays=(
            Array("input", "float", (INPUT * INPUT,), read_only=bool(int(params["READ_ONLY"]))),
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
        load_guard=(
            f"row < blockDim.y * tsy + {HALO} && col < blockDim.x * tsx + {HALO} "
            f"&& by + row < {INPUT} && bx + col < {INPUT}"
        ),
        loops={"yi": (0, tsy), "xi": (0, tsx)},
        # enough copy iterations for one-thread-wide blocks; the guard ends each copy at its size
        load_loops={"ci": (0, tsy + HALO), "cj": (0, tsx + HALO)},
        loads=("input[(by + row) * 4110 + bx + col]",),
        stores=(f"output[y * {IMAGE} + x]",),
        constants={"tsx": tsx, "tsy": tsy},
        # the shared copy, without the padding columns PADDING = 1 adds to some widths (at most 31)
        shared_arrays=(SharedArray("sh", "float", (f"blockDim.y * tsy + {HALO}", f"blockDim.x * tsx + {HALO}")),),
        shared_stores=("sh[row][col]",),
        shared_loads=("sh[threadIdx.y + yi * blockDim.y + i][threadIdx.x + xi * blockDim.x + j]",),
        inner_loops={"i": (0, 15), "j": (0, 15)},
        flops_per_lup=2.0 * 225,
    )
