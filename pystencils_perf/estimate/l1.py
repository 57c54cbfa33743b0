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
    """Totals over a few representative blocks."""

    l1_cycles: float
    requested_load_sectors: int
    store_sectors: int
    lattice_updates: int


def _rows_of(values: np.ndarray, mask: np.ndarray, width: int) -> np.ndarray:
    """Per instruction (first axis), values in rows of `width` consecutive threads; inactive as a sentinel."""
    v = np.where(mask, values, _INACTIVE)
    pad = (-v.shape[-1]) % width
    if pad:
        v = np.concatenate([v, np.full(v.shape[:-1] + (pad,), _INACTIVE)], axis=-1)
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


def block_requests(compiled: CompiledKernel, fields: dict[str, Field], block, bids, device) -> BlockRequests:
    """Totals over the blocks `bids`; warps never straddle two blocks."""
    coords = np.stack([thread_coords(block, bid) for bid in bids])  # (blocks, threads, 6)
    warp, sector = device.warp_size, device.l1_sector_bytes
    instrs = compiled.instructions
    coeffs = np.array([i.address.coeffs for i in instrs], dtype=np.int64)
    offsets = np.array([i.address.offset for i in instrs], dtype=np.int64)
    elem = np.array([fields[i.field].element_bytes for i in instrs], dtype=np.int64)
    base = np.array([fields[i.field].base_offset_bytes for i in instrs], dtype=np.int64)
    address = np.einsum("ic,btc->ibt", coeffs, coords) + offsets[:, None, None]
    byte_addr = base[:, None, None] + elem[:, None, None] * address  # (instructions, blocks, threads)
    masks = {}
    for instr in instrs:
        if instr.guards not in masks:
            masks[instr.guards] = instr.active(coords)
    mask = np.stack([masks[i.guards] for i in instrs])
    is_store = np.array([i.kind is AccessKind.STORE for i in instrs], dtype=bool)

    sectors = distinct_per_row(_rows_of(byte_addr // sector, mask, warp))
    per_instr = sectors.reshape(len(instrs), -1).sum(axis=1)
    store_sectors = int(per_instr[is_store].sum())
    load_sectors = int(per_instr[~is_store].sum())

    cycles = 0
    for eb in np.unique(elem[~is_store]):
        sel = ~is_store & (elem == eb)
        group = max(1, min(warp, device.l1_bank_count * device.l1_bank_width_bytes // int(eb)))
        words = _rows_of(byte_addr[sel] // device.l1_bank_width_bytes, mask[sel], group)
        cycles += bank_cycles(words, device.l1_bank_count)
    lups = sum(int(satisfies(conj, coords).sum()) for conj in compiled.points)
    return BlockRequests(cycles, load_sectors, store_sectors, lups)
