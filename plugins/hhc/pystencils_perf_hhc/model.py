"""Prajapati et al.'s execution-time model of HHC-tiled stencils (PPoPP'17 sec. 4; P1-P29 of SEED_MODELS.md sec. 1).

The outer space dimension S1 and time are tiled with hexagons (width t_S1, height
t_T); a 2D/3D hexagon becomes a prism/slab that one thread block walks through in
sub-tiles of t_S2 (x t_S3) points (classic time skewing). One kernel call per
wavefront of tiles. All compute cost sits in the measured C_iter.

Deviations, all documented in the README:
* w (tiles per wavefront) is P5's ceil(S1 / (2 t_S1 + t_T)) in every dimension;
  the paper's 3D Eq. 22 prints ceil(S1 / (t_S1 + t_T)) while calling it identical to 1D.
* N_w is Eq. 3's approximation 2 ceil(T / t_T) (the exact form has an epsilon of 0 or 1).
* M_tile of 3D is not given in the paper; 2 (t_S1+t_T+1)(t_S2+t_T+1)(t_S3+t_T+1) words is
  our extension of Eq. 19.
* k is also limited by registers when registers per tile (regs/thread x threads) are given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pystencils_perf.devices import Device

from .devices import WORD_BYTES, parameters_of
from .errors import TileError


@dataclass(frozen=True)
class Problem:
    """Space sizes (S1[, S2[, S3]]) and time steps T."""

    sizes: tuple[int, ...]
    time_steps: int

    def __post_init__(self):
        if not 1 <= len(self.sizes) <= 3:
            raise TileError(f"problem sizes must have 1 to 3 dimensions, got {self.sizes!r}")
        for name, v in (*((f"S{i + 1}", s) for i, s in enumerate(self.sizes)), ("T", self.time_steps)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise TileError(f"problem size {name} must be a positive integer, got {v!r}")

    @property
    def dims(self) -> int:
        return len(self.sizes)

    @property
    def iterations(self) -> int:
        """Stencil point updates of the whole run: S1 x S2 (x S3) x T."""
        return math.prod(self.sizes) * self.time_steps


@dataclass(frozen=True, order=True)
class TileSizes:
    """t_S1 (hexagon base), t_T (hexagon height, even), and t_S2 (, t_S3) of the classic-tiled inner dimensions."""

    s1: int
    time: int
    inner: tuple[int, ...] = ()

    def __post_init__(self):
        for name, v in (("t_S1", self.s1), ("t_T", self.time), *((f"t_S{i + 2}", s) for i, s in enumerate(self.inner))):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise TileError(f"tile size {name} must be a positive integer, got {v!r}")
        if self.time % 2:
            raise TileError(f"tile size t_T must be even (hybrid hexagonal tiling), got {self.time}")
        if len(self.inner) > 2:
            raise TileError(f"at most two inner tile sizes (t_S2, t_S3), got {self.inner!r}")

    @property
    def dims(self) -> int:
        return 1 + len(self.inner)

    @property
    def label(self) -> str:
        return "(" + ", ".join(map(str, (self.s1, *self.inner, self.time))) + ")"

    @property
    def cross_section(self) -> int:
        """Points of a sub-tile across the inner dimensions: t_S2 (x t_S3), 1 in 1D."""
        return math.prod(self.inner)

    @property
    def width(self) -> int:
        """P4: w_tile = t_S1 + t_T - 2, the widest row of the hexagon."""
        return self.s1 + self.time - 2

    @property
    def pitch(self) -> int:
        """P5: distance of neighbouring tiles in a wavefront, w_tile + t_S1 + 2 = 2 t_S1 + t_T."""
        return 2 * self.s1 + self.time


@dataclass(frozen=True)
class HhcPrediction:
    """T_alg and every intermediate of the model (seconds unless the name says otherwise)."""

    tile: TileSizes
    seconds: float
    wavefronts: int
    tiles_per_wavefront: int
    subtiles: int
    tiles_per_sm: int
    shared_memory_bytes: int
    transfer_seconds: float
    compute_seconds: float
    tiles_seconds: float


def wavefronts(time_steps: int, tile_time: int) -> int:
    """P3: N_w ~ 2 ceil(T / t_T), one kernel call each."""
    return 2 * -(-time_steps // tile_time)


def tiles_per_wavefront(s1: int, tile: TileSizes) -> int:
    """P5 (also for 2D and 3D, see the module docstring): w = ceil(S1 / (2 t_S1 + t_T))."""
    return -(-s1 // tile.pitch)


def subtiles(problem: Problem, tile: TileSizes) -> int:
    """P18/P22: sub-prisms (sub-slabs) one block walks through, ceil((S_i + t_T) / t_Si) per inner dimension."""
    return math.prod(-(-(s + tile.time) // t) for s, t in zip(problem.sizes[1:], tile.inner))


def footprint_words(tile: TileSizes) -> int:
    """P7/P15/P23: m_i = m_o = t_S2 (t_S3) (t_S1 + 2 t_T) words."""
    return tile.cross_section * (tile.s1 + 2 * tile.time)


def transfer_seconds(tile: TileSizes, device: Device) -> float:
    """P8/P16/P24: m' = (m_i + m_o) L + 2 tau_sync."""
    parameters = parameters_of(device)
    return 2 * footprint_words(tile) * parameters.seconds_per_word + 2 * parameters.barrier_seconds


def compute_seconds(tile: TileSizes, device: Device, c_iter_seconds: float) -> float:
    """P9/P17/P26: c = 2 C_iter sum_{x = t_S1, t_S1+2, ..., w_tile} ceil(x t_S2 t_S3 / n_V) + t_T tau_sync.

    The hexagon has t_T rows, widths t_S1 ... w_tile each twice; a row of x points
    (times the cross section) takes ceil(points / n_V) steps of C_iter.
    """
    parameters = parameters_of(device)
    n_v = parameters.vector_units_per_sm
    steps = sum(-(-x * tile.cross_section // n_v) for x in range(tile.s1, tile.width + 1, 2))
    return 2 * c_iter_seconds * steps + tile.time * parameters.barrier_seconds


def shared_memory_words(tile: TileSizes) -> int:
    """M_tile: 1D 2 (t_S + t_T) (P10); 2D 2 (t_S1+t_T+1)(t_S2+t_T+1) (P20); 3D our extension of P20."""
    if tile.dims == 1:
        return 2 * (tile.s1 + tile.time)
    return 2 * (tile.s1 + tile.time + 1) * math.prod(t + tile.time + 1 for t in tile.inner)


def tiles_per_sm(tile: TileSizes, device: Device, registers_per_tile: int | None = None) -> int:
    """P12 with Eq. 31: k = min(M_SM // M_tile, M_TB_SM[, R_SM // R_tile]); a tile over 48 KB is an error."""
    smem = shared_memory_words(tile) * WORD_BYTES
    if smem > device.shared_memory_per_block_bytes:
        raise TileError(
            f"tile {tile.label} needs {smem} B of shared memory, more than {device.name}'s "
            f"{device.shared_memory_per_block_bytes} B per thread block"
        )
    k = min(device.shared_memory_per_sm_bytes // smem, device.max_blocks_per_sm)
    if registers_per_tile is not None:
        if registers_per_tile > device.registers_per_sm:
            raise TileError(
                f"tile {tile.label}: {registers_per_tile} registers per block exceed {device.name}'s {device.registers_per_sm}"
            )
        k = min(k, device.registers_per_sm // registers_per_tile)
    return k


def tiles_time(dims: int, k: int, transfer: float, compute: float, n_sub: int) -> float:
    """Time of k concurrent tiles on one SM: P11/P13 (1D tile), P18 (2D prism), P27/P28 (3D slab)."""
    if dims == 1:
        return transfer + compute + (k - 1) * max(transfer, compute)
    if k == 1:
        return (transfer + compute) * n_sub
    return transfer + k * max(transfer, compute) * n_sub


def predict(
    problem: Problem, tile: TileSizes, device: Device, c_iter_seconds: float, registers_per_tile: int | None = None
) -> HhcPrediction:
    """P6/P19/P29: T_alg = N_w T_sync + N_w T_k ceil(ceil(w / k) / n_SM)."""
    if tile.dims != problem.dims:
        raise TileError(
            f"tile {tile.label} has {tile.dims} space dimension(s), the problem {problem.sizes} has {problem.dims}"
        )
    if not c_iter_seconds > 0:
        raise TileError(f"C_iter must be a positive number of seconds, got {c_iter_seconds!r}")
    n_w = wavefronts(problem.time_steps, tile.time)
    w = tiles_per_wavefront(problem.sizes[0], tile)
    n_sub = subtiles(problem, tile)
    k = tiles_per_sm(tile, device, registers_per_tile)
    m = transfer_seconds(tile, device)
    c = compute_seconds(tile, device, c_iter_seconds)
    t_k = tiles_time(tile.dims, k, m, c, n_sub)
    rounds = -(-(-(-w // k)) // device.sm_count)
    seconds = n_w * parameters_of(device).kernel_sync_seconds + n_w * t_k * rounds
    return HhcPrediction(tile, seconds, n_w, w, n_sub, k, shared_memory_words(tile) * WORD_BYTES, m, c, t_k)


def compute_floor_seconds(problem: Problem, device: Device, c_iter_seconds: float) -> float:
    """Every point update once at C_iter on every vector unit of the GPU: C_iter S1 S2 (S3) T / (n_SM n_V).

    A lower bound no tiling can beat (not in the paper; derived from its tables).
    """
    return c_iter_seconds * problem.iterations / (device.sm_count * parameters_of(device).vector_units_per_sm)
