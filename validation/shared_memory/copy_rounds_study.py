"""A study for issue 56: the copy's loads wait as its SASS says, and what that does to the shared-memory scores.

    python3 validation/shared_memory/copy_rounds_study.py

Not the product's model. nvcc 13 (sm_80) compiles Kernel Tuner's shared-memory convolution (32x4 block, tile 1x3,
both ``read_only`` settings) so that the copy's column loop issues its iterations left over one at a time (each
load feeds its shared store before the next load is issued) and each unrolled group of 4 at once; the row loop is a
plain loop around it. A warp therefore waits, per row it copies, once per iteration left over and once per group of
its threads (`copy_waits_per_thread`), where the throughput model's latency term assumes 4 plain loads in flight and
1 for ``__ldg`` under an ``if`` (`models/data/throughput.toml`). The table is `validate_shared_memory.py`'s second
part with those waits given to the model as the compiled code's (`ResourceUsage.load_waits_per_thread`, which
replaces the estimate of the rounds), next to the same without them. The copy makes all of the kernel's global loads.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))

import validate_shared_memory as validation  # noqa: E402
from convolution_summary import CompiledRegisters  # noqa: E402

HALO = 14
WARP = 32
#: nvcc's run-time unroll of the copy's column loop (`pystencils_perf_cuda.description.NVCC_RUNTIME_UNROLL`)
UNROLL = 4


@functools.lru_cache(maxsize=None)
def copy_waits_per_thread(block_x: int, block_y: int, tile_x: int, tile_y: int) -> float:
    """Mean over a block's warps of the waits of its copy: per row its threads copy, the most iterations left over
    of one of its threads plus the most groups of 4, where a thread copies the columns ``tx, tx + block_x, ...``
    below ``block_x * tile_x + 14`` and the rows ``ty, ty + block_y, ...`` below ``block_y * tile_y + 14``."""
    columns, rows = block_x * tile_x + HALO, block_y * tile_y + HALO
    lanes = np.arange(block_x * block_y)
    tx, ty = lanes % block_x, lanes // block_x
    waits = []
    for first in range(0, len(lanes), WARP):
        column_trips = -(-(columns - tx[first : first + WARP]) // block_x)
        row_trips = -(-(rows - ty[first : first + WARP]) // block_y)
        per_row = (column_trips % UNROLL).max() + (column_trips // UNROLL).max()
        waits.append(row_trips.max() * per_row)
    return float(np.mean(waits))


def with_copy_waits(plugin_class) -> None:
    """Make `plugin_class`'s launch resources of the shared-memory convolution carry `copy_waits_per_thread`."""
    original = plugin_class.perf_launch_resources

    @functools.wraps(original)
    def perf_launch_resources(self, kernel, model, launches, device):
        found = original(self, kernel, model, launches, device)
        if not found or not getattr(kernel, "shared_arrays", ()):
            return found
        tile = (kernel.constants["tsx"], kernel.constants["tsy"])
        return {
            launch: dataclasses.replace(usage, load_waits_per_thread=copy_waits_per_thread(*launch.block[:2], *tile))
            for launch, usage in found.items()
        }

    plugin_class.perf_launch_resources = perf_launch_resources


def main() -> int:
    print("the shared-memory scores with the copy's waits as its SASS has them (validate_shared_memory.py otherwise):")
    with_copy_waits(CompiledRegisters)
    with_copy_waits(validation.KttRegisters)
    validation.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main())
