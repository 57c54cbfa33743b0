"""SPEC: KTT's shared-memory 15x15 convolution (global and shared accesses), as a CUDA description.

Described from `Examples/KernelTunerConvolution/KernelTunerConvolution.cu` of HiPerCoRe/KTT
(931c41570df4ae279a2fb1d422be781728b39bed, MIT), read, not copied: a 4096 x 4096 float image,
input 4110 x 4110 (the image plus a 7-point border on each side). Each block first copies the input
its tile needs, ``(BLOCK_SIZE_Y * TILE_SIZE_Y + 14) x (BLOCK_SIZE_X * TILE_SIZE_X + 14)`` values from
``(blockIdx.y * BLOCK_SIZE_Y * TILE_SIZE_Y, blockIdx.x * BLOCK_SIZE_X * TILE_SIZE_X)`` on, into shared
memory: ``for (i = ty; i < rows; i += BLOCK_SIZE_Y) for (j = tx; j < columns; j += BLOCK_SIZE_X)``
(`load_loops` ``ci``, ``cj``; the row bound in `load_guard`, the column bound in `load_loop_bounds`). Then
each thread computes its tile of outputs from shared memory and stores them strided by the block size, as in the
A100 convolution.
Where the tile does not divide the image (the source's ``#if``), the copy also checks the input's
edge and the stores the image's; where it does, those conditions hold anyway (a block's copy ends at
most at row and column 4096 + 14), so `load_guard` and `guard` state them for every block size.

The copy stores into the shared tile ``sh``, and the 225 FMAs per output read it at
``sh[ty + yi * BLOCK_SIZE_Y + i][tx + xi * BLOCK_SIZE_X + j]`` (`inner_loops` over the taps i, j), each distinct
value once per thread. PADDING = 1 pads KTT's shared rows by a rule that is not Kernel Tuner's
(`shared_wavefronts.md`), so only PADDING = 0 is described. The shared tile's bytes set the occupancy; they equal
KTT's ``shared_mem_bytes`` column in every row. `validation/shared_memory/report.md` checks the shared wavefronts
against the 2080 Ti's counters and ranks the launches.

The kernel is Kernel Tuner's, whose description `../a100_convolution/convolution_shmem.py` is: this SPEC gives it
KTT's parameter names (PADDING = 0 is Kernel Tuner's use_padding = 0).
"""

import runpy
from pathlib import Path

_KERNEL_TUNER = runpy.run_path(str(Path(__file__).resolve().parents[1] / "a100_convolution/convolution_shmem.py"))
#: the image's side, the filter's halo and the input's side, in points (the code studies import them)
IMAGE, HALO, INPUT = _KERNEL_TUNER["IMAGE"], _KERNEL_TUNER["HALO"], _KERNEL_TUNER["INPUT"]

#: the KTT export names the block size in capitals
block_parameters = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y")
#: useful outputs per launch
lattice_updates = _KERNEL_TUNER["lattice_updates"]
#: KTT pads its shared rows by a rule of its own, which the description does not know; KTT's own output also
#: names the image and the filter's half width the description has
fixed_parameters = {"PADDING": 0, "IMAGE_WIDTH": IMAGE, "IMAGE_HEIGHT": IMAGE, "HFS": HALO // 2}


def kernel_for(params: dict):
    """The description for one tile size and READ_ONLY setting."""
    return _KERNEL_TUNER["kernel_for"](
        {
            "tile_size_x": params["TILE_SIZE_X"],
            "tile_size_y": params["TILE_SIZE_Y"],
            "read_only": params["READ_ONLY"],
            "use_padding": 0,
        }
    )
