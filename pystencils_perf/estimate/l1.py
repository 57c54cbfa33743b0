"""What one block's warps ask of L1: bank-conflict cycles and per-warp sectors.

L1 delivers one wavefront of ``l1_bank_count`` banks x ``l1_bank_width_bytes``
per cycle (16 x 8 B on NVIDIA, seeds/000 sec. III.B). A group of threads that
together can fill one wavefront (a half-warp of doubles, a warp of floats)
needs as many cycles as the busiest bank has distinct words to deliver.
Requests to L2 are per warp and instruction, in unique 32-B sectors; stores
write through, so every warp's store sectors go to L2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernel import AccessKind, Field
from .addresses import CompiledKernel, satisfies, thread_coords

_INACTIVE = np.iinfo(np.int64).max


@dataclass(frozen=True)
class BlockRequests:
    """Per-block totals of one representative block."""

    l1_cycles: float
    requested_load_sectors: int
    store_sectors: int
    lattice_updates: int


def _rows_of(values: np.ndarray, mask: np.ndarray, width: int) -> np.ndarray:
    """Values grouped in rows of `width` consecutive threads, inactive threads as a sentinel."""
    v = np.where(mask, values, _INACTIVE)
    pad = (-len(v)) % width
    if pad:
        v = np.r_[v, np.full(pad, _INACTIVE)]
    return v.reshape(-1, width)


def distinct_per_row(rows: np.ndarray) -> np.ndarray:
    """Number of distinct active values in each row."""
    s = np.sort(rows, axis=1)
    new = np.ones_like(s, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return np.sum(new & (s != _INACTIVE), axis=1)


def bank_cycles(word_rows: np.ndarray, bank_count: int) -> int:
    """Sum over rows of the largest number of distinct words one bank must deliver."""
    s = np.sort(word_rows, axis=1)
    new = np.ones_like(s, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    new &= s != _INACTIVE
    row = np.broadcast_to(np.arange(len(s))[:, None], s.shape)[new]
    bank = s[new] % bank_count
    per_bank = np.bincount(row * bank_count + bank, minlength=len(s) * bank_count).reshape(len(s), bank_count)
    return int(per_bank.max(axis=1).sum())


def block_requests(compiled: CompiledKernel, fields: dict[str, Field], block, bid, device) -> BlockRequests:
    coords = thread_coords(block, bid)
    warp = device.warp_size
    cycles = 0
    load_sectors = 0
    store_sectors = 0
    sector = device.l1_sector_bytes
    for instr in compiled.instructions:
        f = fields[instr.field]
        mask = instr.active(coords)
        byte_addr = f.base_offset_bytes + f.element_bytes * instr.address.evaluate(coords)
        sectors = distinct_per_row(_rows_of(byte_addr // sector, mask, warp)).sum()
        if instr.kind is AccessKind.STORE:
            store_sectors += int(sectors)
            continue
        load_sectors += int(sectors)
        group = max(1, min(warp, device.l1_bank_count * device.l1_bank_width_bytes // f.element_bytes))
        words = _rows_of(byte_addr // device.l1_bank_width_bytes, mask, group)
        cycles += bank_cycles(words, device.l1_bank_count)
    lups = sum(int(satisfies(conj, coords).sum()) for conj in compiled.points)
    return BlockRequests(cycles, load_sectors, store_sectors, lups)
