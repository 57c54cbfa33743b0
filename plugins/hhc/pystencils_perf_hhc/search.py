"""Tile-size selection (PPoPP'17 sec. 6.1, Eq. 31; P30): exhaustive T_alg over the feasible tiles.

Feasible: M_tile <= 48 KB per block, k <= M_TB_SM, k M_tile <= M_SM (both by the
construction of k), t_T even, the innermost tile size a multiple of 32 (full warps).
The paper then measures every tile within 10 % of the minimum (`within_band`).

The minimum-tile guard is ours, not the paper's: the model counts the rows of a
hexagon as t_T t_S1 + t_T^2/2 - t_T points while its pitch and wavefront count
imply t_T (2 t_S1 + t_T)/2, so it under-counts the work by the factor
(2 t_S1 + t_T - 2) / (2 t_S1 + t_T): 50 % for t_S1 = 1, t_T = 2. Unguarded, the
search therefore picks such a degenerate tile (Gradient-2D 8192^3 on the GTX 980:
(1, 640, 2) at 8.4 s, half the compute floor of 16.35 s). Requiring a pitch
2 t_S1 + t_T >= 20 bounds the under-count by 10 %.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pystencils_perf.devices import Device

from .devices import WORD_BYTES
from .errors import TileError
from .model import HhcPrediction, Problem, TileSizes, predict

#: smallest pitch 2 t_S1 + t_T a searched tile may have (the under-count stays <= 2 / pitch = 10 %)
MIN_PITCH = 20


@dataclass(frozen=True)
class SearchSpace:
    """The tile sizes to enumerate per parameter, each ascending; the innermost steps by a warp (32)."""

    s1: Sequence[int] = tuple(range(1, 65))
    time: Sequence[int] = tuple(range(2, 65, 2))
    inner_outer: Sequence[int] = tuple(range(1, 65))  # t_S2 of 3D problems
    innermost: Sequence[int] = tuple(range(32, 1025, 32))  # t_S2 of 2D, t_S3 of 3D problems

    def feasible_tiles(self, dims: int, device: Device, min_pitch: int | None) -> Iterator[TileSizes]:
        """Tiles with an even t_T, the pitch guard, and M_tile within a block's shared memory.

        M_tile grows with every inner size, so each inner loop stops at the first tile too large.
        """
        if dims not in (1, 2, 3):
            raise TileError(f"the HHC model has 1, 2 or 3 space dimensions, not {dims}")
        words = device.shared_memory_per_block_bytes // WORD_BYTES
        for s1, t in itertools.product(self.s1, self.time):
            if t % 2 or (min_pitch is not None and 2 * s1 + t < min_pitch):
                continue
            if dims == 1:
                if 2 * (s1 + t) <= words:
                    yield TileSizes(s1, t)
                continue
            hexagon = 2 * (s1 + t + 1)
            for inner in _inner_tiles(self, dims, t, words // hexagon):
                yield TileSizes(s1, t, inner)


def _inner_tiles(space: SearchSpace, dims: int, t: int, budget: int) -> Iterator[tuple[int, ...]]:
    """Inner tile sizes whose product of (t_Si + t_T + 1) stays within `budget`."""
    outer_sizes = space.inner_outer if dims == 3 else (None,)
    for outer in outer_sizes:
        outer_factor = 1 if outer is None else outer + t + 1
        if outer_factor * (space.innermost[0] + t + 1) > budget:
            break
        for inner in space.innermost:
            if outer_factor * (inner + t + 1) > budget:
                break
            yield (inner,) if outer is None else (outer, inner)


def search_tiles(
    problem: Problem,
    device: Device,
    c_iter_seconds: float,
    *,
    space: SearchSpace = SearchSpace(),
    min_pitch: int | None = MIN_PITCH,
) -> list[HhcPrediction]:
    """T_alg of every feasible tile, fastest first; `min_pitch=None` drops the guard (the paper's search)."""
    results = [
        predict(problem, tile, device, c_iter_seconds) for tile in space.feasible_tiles(problem.dims, device, min_pitch)
    ]
    if not results:
        raise TileError(f"no feasible tile for problem {problem.sizes} x {problem.time_steps} on {device.name}")
    results.sort(key=lambda p: (p.seconds, p.tile))
    return results


def within_band(results: Sequence[HhcPrediction], band: float = 1.1) -> list[HhcPrediction]:
    """P30 step 2: every tile with T_alg <= band x the minimum (the paper then measures them)."""
    best = min(p.seconds for p in results)
    return [p for p in results if p.seconds <= band * best]
