"""The worked examples of Ryoo et al. (CGO'08), as kernel descriptions the metrics are computed from.

Only what a PTX/cubin compile gave the authors is an input here (registers, shared
memory, the dynamic instruction count); everything else follows from the kernel's
structure and the G80 limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from .g80 import G80Occupancy, g80_occupancy, g80_parameters
from .metrics import RyooInputs, RyooMetrics, ryoo_metrics, warps_per_block


@dataclass(frozen=True)
class TiledMatmul:
    """Fig. 2(c): tiled matrix multiplication, one output element per thread, tile x tile blocks.

    Each iteration of the outer loop loads one tile of A and one of B (a pair of
    independent global loads: one blocking unit), and has two barriers (after the
    loads, after the unrolled inner product).
    """

    matrix_size: int = 4096
    tile: int = 16
    #: ``nvcc -cubin`` (sec. 4)
    registers_per_thread: int = 13
    shared_memory_bytes: int = 2088
    #: PTX count with the outer loop annotated with its trip count (sec. 4); needs the PTX, so an input
    instructions_per_thread: int = 15150
    barriers_per_iteration: int = 2
    load_groups_per_iteration: int = 1

    @property
    def trip_count(self) -> int:
        """Iterations of the outer loop: matrix size / tile length."""
        return self.matrix_size // self.tile

    @property
    def threads_per_block(self) -> int:
        return self.tile * self.tile

    @property
    def threads(self) -> int:
        """One thread per element of the output matrix."""
        return self.matrix_size * self.matrix_size

    @property
    def regions_per_thread(self) -> int:
        """R5: blocking units executed per thread (barriers and load groups) + 1."""
        return self.trip_count * (self.barriers_per_iteration + self.load_groups_per_iteration) + 1

    def occupancy(self) -> G80Occupancy:
        return g80_occupancy(self.threads_per_block, self.registers_per_thread, self.shared_memory_bytes)

    def inputs(self) -> RyooInputs:
        return RyooInputs(
            instructions_per_thread=self.instructions_per_thread,
            regions_per_thread=self.regions_per_thread,
            threads=self.threads,
            warps_per_block=warps_per_block(self.threads_per_block, g80_parameters()["warp_size"]),
            blocks_per_sm=self.occupancy().blocks_per_sm,
        )

    def metrics(self) -> RyooMetrics:
        return ryoo_metrics(self.inputs())
