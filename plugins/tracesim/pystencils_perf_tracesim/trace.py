"""Trace synthesis (seeds/SEED_MODELS.md 2(f) items 1-2): the memory transactions of every warp of a wave.

The kernel model already gives what Wang et al.'s LLVM pass derives (W9-W11):
affine addresses, unrolled folding loops and index guards. For one wave of
blocks, every warp instruction becomes the set of 32-B sectors its active lanes
touch, grouped by cache line as ``(line, sector bit mask)`` pairs. Addresses
live in one virtual address space where the fields are placed one after
another, each on a 256-B boundary plus its modelled base offset (W12).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pystencils_perf.estimate.addresses import CompiledKernel, Instruction, satisfies
from pystencils_perf.estimate.l1 import bank_cycles_per_instruction
from pystencils_perf.kernel import ALIGNMENT_BYTES, AccessKind, Field

#: marks an inactive lane (sorts last; the core's L1 helpers use the same sentinel)
INACTIVE = np.iinfo(np.int64).max


def field_bases_bytes(fields: tuple[Field, ...]) -> dict[str, int]:
    """Byte address of element 0 of each field, the fields laid out one after another."""
    bases, end = {}, 0
    for f in fields:
        lowest = sum(min(0, (n - 1) * s) for n, s in zip(f.shape, f.strides)) * f.element_bytes
        highest = sum(max(0, (n - 1) * s) for n, s in zip(f.shape, f.strides)) * f.element_bytes
        start = -(-end // ALIGNMENT_BYTES) * ALIGNMENT_BYTES
        bases[f.name] = start + f.base_offset_bytes - lowest
        end = bases[f.name] + highest + f.element_bytes
    return bases


def block_ids(linear_ids: np.ndarray, grid) -> np.ndarray:
    """(bid.x, bid.y, bid.z) of linear block ids in launch order (x fastest)."""
    gx, gy, _ = grid
    return np.stack([linear_ids % gx, (linear_ids // gx) % gy, linear_ids // (gx * gy)], axis=1)


def warp_coords(block, bids: np.ndarray, warp_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Thread coordinates (tid, bid) of the given blocks, shape (blocks * warps, warp_size, 6), and which lanes exist."""
    bx, by, bz = block
    threads = bx * by * bz
    warps = -(-threads // warp_size)
    t = np.arange(warps * warp_size)
    lane_exists = np.broadcast_to(t < threads, (len(bids), len(t)))
    tid = np.stack([t % bx, (t // bx) % by, t // (bx * by)], axis=1)
    coords = np.empty((len(bids), len(t), 6), dtype=np.int64)
    coords[:, :, :3] = tid
    coords[:, :, 3:] = bids[:, None, :]
    return coords.reshape(-1, warp_size, 6), lane_exists.reshape(-1, warp_size)


@dataclass(frozen=True)
class InstructionTrace:
    """One instruction over all warps of a wave: the transactions of warp row r are ``lines[starts[r]:starts[r+1]]``."""

    kind: AccessKind
    starts: list[int]
    lines: list[int]
    sector_masks: list[int]
    #: L1 cycles of each timed warp (the busiest bank's distinct words, per wavefront; 0 for the others), loads only
    l1_cycles: list[int]


@dataclass(frozen=True)
class WaveTrace:
    """Every warp instruction of one wave; warp row ``b * warps_per_block + w`` is warp w of the wave's block b."""

    loads: tuple[InstructionTrace, ...]
    stores: tuple[InstructionTrace, ...]
    #: lattice updates of each warp row
    lattice_updates: list[int]
    warps_per_block: int
    blocks: int


def _transactions(sectors: np.ndarray, sectors_per_line: int):
    """Per warp row, the distinct lines touched and their sector masks (rows of `sectors` hold one warp's lanes)."""
    s = np.sort(sectors, axis=1)
    distinct = np.ones_like(s, dtype=bool)
    distinct[:, 1:] = s[:, 1:] != s[:, :-1]
    distinct &= s != INACTIVE
    rows = np.broadcast_to(np.arange(len(s))[:, None], s.shape)[distinct]
    sector = s[distinct]
    line = sector // sectors_per_line
    bit = np.left_shift(1, sector % sectors_per_line)
    first = np.ones(len(line), dtype=bool)
    first[1:] = (line[1:] != line[:-1]) | (rows[1:] != rows[:-1])
    group_starts = np.flatnonzero(first)
    masks = np.bitwise_or.reduceat(bit, group_starts) if len(group_starts) else bit[:0]
    starts = np.searchsorted(rows[group_starts], np.arange(len(s) + 1))
    return starts, line[group_starts], masks


def _l1_cycles(byte_addr: np.ndarray, active: np.ndarray, element_bytes: int, device) -> np.ndarray:
    """Per warp row, L1 data-path cycles: one wavefront per group of lanes that fills the banks once (as the core's L1 model)."""
    warp = byte_addr.shape[1]
    group = max(1, min(warp, device.l1_bank_count * device.l1_bank_width_bytes // element_bytes))
    words = np.where(active, byte_addr // device.l1_bank_width_bytes, INACTIVE).reshape(-1, group)
    return bank_cycles_per_instruction(words, device.l1_bank_count, len(byte_addr))


class _WaveCoords:
    """Thread coordinates of a wave, with the affine parts and guards that instructions share computed once."""

    def __init__(self, coords: np.ndarray, lane_exists: np.ndarray):
        self.coords, self.lane_exists = coords, lane_exists
        self._linear, self._active = {}, {}

    def linear(self, coeffs: tuple[int, ...]) -> np.ndarray:
        """``coeffs . (tid, bid)`` per lane (instructions of one field differ only in their offsets)."""
        if coeffs not in self._linear:
            value = np.zeros(self.coords.shape[:2], dtype=np.int64)
            for axis, c in enumerate(coeffs):
                if c:
                    value += c * self.coords[:, :, axis]
            self._linear[coeffs] = value
        return self._linear[coeffs]

    def active(self, instr: Instruction) -> np.ndarray:
        if instr.guards not in self._active:
            self._active[instr.guards] = instr.active(self.coords) & self.lane_exists
        return self._active[instr.guards]


def _instruction_trace(
    instr: Instruction, wave: _WaveCoords, base_bytes: int, element_bytes: int, timed_rows: np.ndarray, device
) -> InstructionTrace:
    active = wave.active(instr)
    byte_addr = base_bytes + element_bytes * (wave.linear(instr.address.coeffs) + instr.address.offset)
    sectors = np.where(active, byte_addr // device.l1_sector_bytes, INACTIVE)
    starts, lines, masks = _transactions(sectors, device.l1_line_bytes // device.l1_sector_bytes)
    cycles = []
    if instr.kind is AccessKind.LOAD:
        cycles = np.zeros(len(byte_addr), dtype=np.int64)
        cycles[timed_rows] = _l1_cycles(byte_addr[timed_rows], active[timed_rows], element_bytes, device)
        cycles = cycles.tolist()
    return InstructionTrace(instr.kind, starts.tolist(), lines.tolist(), masks.tolist(), cycles)


def wave_trace(
    compiled: CompiledKernel,
    fields: dict[str, Field],
    bases: dict[str, int],
    block,
    grid,
    linear_ids: np.ndarray,
    device,
) -> WaveTrace:
    """The trace of the blocks `linear_ids` (one wave): loads in harvested order, then stores (W11, 2(f) item 1).

    L1 cycles are computed for the timed warps only: those of SM 0's blocks (the wave's blocks 0, N_SM, 2 N_SM, ...).
    """
    coords, lane_exists = warp_coords(block, block_ids(linear_ids, grid), device.warp_size)
    warps_per_block = len(coords) // len(linear_ids)
    timed_rows = (
        np.arange(0, len(linear_ids), device.sm_count)[:, None] * warps_per_block + np.arange(warps_per_block)
    ).ravel()
    wave = _WaveCoords(coords, lane_exists)
    traces = {AccessKind.LOAD: [], AccessKind.STORE: []}
    for instr in compiled.instructions:
        f = fields[instr.field]
        traces[instr.kind].append(_instruction_trace(instr, wave, bases[f.name], f.element_bytes, timed_rows, device))
    lups = np.zeros(coords.shape[:2], dtype=np.int64)
    for conjunction in compiled.points:
        lups += satisfies(conjunction, coords) & lane_exists
    return WaveTrace(
        tuple(traces[AccessKind.LOAD]),
        tuple(traces[AccessKind.STORE]),
        lups.sum(axis=1).tolist(),
        warps_per_block,
        len(linear_ids),
    )
