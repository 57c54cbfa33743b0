"""What one block's warps ask of L1: bank-conflict cycles and per-warp sectors.

L1 delivers one wavefront of ``l1_bank_count`` banks x ``l1_bank_width_bytes``
per cycle (16 x 8 B on NVIDIA, Ernst et al. (JPDC 2023) sec. III.B). A group of threads that
together can fill one wavefront (a half-warp of doubles, a warp of floats)
needs as many cycles as the busiest bank has distinct words to deliver.
Requests to L2 are per warp and instruction, in unique 32-B sectors; stores
write through, so every warp's store sectors go to L2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernel import AccessKind, Field
from .addresses import (
    Affine,
    CompiledKernel,
    Instruction,
    active_masks,
    block_threads,
    byte_addresses,
    cached_by_identity,
    offset_groups,
)

_INACTIVE = np.iinfo(np.int64).max


@dataclass(frozen=True)
class BlockRequests:
    """Totals over a few representative blocks."""

    l1_cycles: float
    requested_load_sectors: int
    store_sectors: int
    lattice_updates: int
    #: of `requested_load_sectors`, those of arrays whose loads the L1 does not cache (`block_requests`)
    uncached_load_sectors: int = 0


def in_rows(values: np.ndarray, width: int, fill) -> np.ndarray:
    """`values` in rows of `width` consecutive threads (the last axis: one block's threads, padded per block with
    `fill`, so that a row never holds two blocks' threads: a partly filled last warp). Rows keep the order of the
    other axes."""
    pad = (-values.shape[-1]) % width
    if pad:
        values = np.concatenate([values, np.full(values.shape[:-1] + (pad,), fill, dtype=values.dtype)], axis=-1)
    return values.reshape(-1, width)


def rows_of(values: np.ndarray, mask: np.ndarray, width: int) -> np.ndarray:
    """Values in rows of `width` consecutive threads (`in_rows`); inactive as a sentinel."""
    return in_rows(np.where(mask, values, _INACTIVE), width, _INACTIVE)


def distinct_per_row(rows: np.ndarray) -> np.ndarray:
    """Number of distinct active values in each row."""
    s = np.sort(rows, axis=1)
    new = np.ones_like(s, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return np.sum(new & (s != _INACTIVE), axis=1)


def bank_cycles_per_instruction(word_rows: np.ndarray, bank_count: int, n_instructions: int) -> np.ndarray:
    """Per instruction, the sum over its rows of the largest number of distinct words one bank must deliver.

    `word_rows` holds the rows of instruction 0, then those of instruction 1, and so on.
    """
    s = np.sort(word_rows, axis=1)
    new = np.ones_like(s, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    new &= s != _INACTIVE
    row = np.broadcast_to(np.arange(len(s))[:, None], s.shape)[new]
    bank = s[new] % bank_count
    per_bank = np.bincount(row * bank_count + bank, minlength=len(s) * bank_count).reshape(len(s), bank_count)
    return per_bank.max(axis=1).reshape(n_instructions, -1).sum(axis=1)


_ZERO, _ONE = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)


def shift_classes(
    instrs, fields: dict[str, Field], period_bytes: int, threads, kind: AccessKind | None = None, loads_in_flight=None
):
    """Instructions (of `kind`, where given) that differ by a whole number of `period_bytes` and run on the same
    threads of the blocks `threads` ask the same of L1: one of each, and its count; with `loads_in_flight` (a
    compiled kernel's `CompiledKernel.loads_in_flight`) only those whose warps issue as many loads at once.

    Shifting every address of a warp by a multiple of the sector and the bank
    word moves its sectors and rotates its banks, so sector counts and bank
    cycles are unchanged (by a multiple of the line: its line count too); a
    stencil's 25 loads fall into a handful of classes. Guards count by the threads
    they let run, and whether there are any: a tile's points each have their own,
    and in the middle of the grid all of them let every thread run.
    """
    masks: dict = {}
    classes: dict[tuple, list] = {}
    for (name, instr_kind, coeffs, guards), offsets in offset_groups(instrs):
        if kind is not None and instr_kind is not kind:
            continue
        if guards not in masks:
            in_flight = loads_in_flight(guards) if loads_in_flight else 0
            masks[guards] = (threads.mask_class(guards), any(guards), in_flight)
        f = fields[name]
        residues = (f.base_offset_bytes + f.element_bytes * offsets) % period_bytes
        if len(residues) == 1:  # a tile copy's iterations: each under a guard of its own
            unique, first, counts = residues, _ZERO, _ONE
        else:
            unique, first, counts = np.unique(residues, return_index=True, return_counts=True)
        for residue, i, count in zip(unique.tolist(), first.tolist(), counts.tolist()):
            key = (name, instr_kind, coeffs, masks[guards], residue)
            if key in classes:
                classes[key][1] += count
            else:
                classes[key] = [Instruction(name, instr_kind, Affine(coeffs, int(offsets[i])), guards), count]
    return [c[0] for c in classes.values()], np.array([c[1] for c in classes.values()], dtype=np.int64)


def issued_instructions(
    compiled: CompiledKernel, fields: dict[str, Field], period_bytes: int, threads, kind: AccessKind | None = None
):
    """What the warps of the blocks `threads` issue (of `kind`, where given): the instructions that issue alone by
    their `shift_classes` (`period_bytes`), then each joined one (`CompiledKernel.joined`) once, as its first piece
    with the guards of all; their counts, each lane's byte address (`byte_addresses`) and which lanes run each
    (`active_masks`), shape (instructions, blocks, threads)."""
    in_flight = compiled.loads_in_flight if kind is AccessKind.LOAD else None
    instrs, weight = shift_classes(compiled.alone, fields, period_bytes, threads, kind, in_flight)
    byte_addr, mask = byte_addresses(instrs, fields, threads), active_masks(instrs, threads)
    groups, counts = _joined_classes(compiled, fields, period_bytes, threads, kind)
    if not groups:
        return instrs, weight, byte_addr, mask
    pieces = [compiled.instructions[i] for g in groups for i in g]
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
    piece_mask = active_masks(pieces, threads)
    # a lane passes one piece's guard at most: the sum picks its address
    joined_addr = np.add.reduceat(np.where(piece_mask, byte_addresses(pieces, fields, threads), 0), starts, axis=0)
    joined_mask = np.logical_or.reduceat(piece_mask, starts, axis=0)
    heads = [
        compiled.instructions[g[0]]._replace(guards=tuple(c for i in g for c in compiled.instructions[i].guards))
        for g in groups
    ]
    return (
        [*instrs, *heads],
        np.concatenate([weight, counts]),
        np.concatenate([byte_addr, joined_addr]),
        np.concatenate([mask, joined_mask]),
    )


def _joined_classes(compiled: CompiledKernel, fields: dict[str, Field], period_bytes: int, threads, kind):
    """The joined instructions of `kind` (`CompiledKernel.joined`) as `shift_classes` has the others: those whose
    pieces differ from another's by one shift of a whole number of `period_bytes` and run on the same threads ask
    the same, one of each (a copy's rows) and its count."""
    classes: dict[tuple, list] = {}
    for group in compiled.joined:
        pieces = [compiled.instructions[i] for i in group]
        first = pieces[0]
        if kind is not None and first.kind is not kind:
            continue
        f = fields[first.field]
        key = (
            (f.base_offset_bytes + f.element_bytes * first.address.offset) % period_bytes,
            compiled.loads_in_flight(first.guards) if kind is AccessKind.LOAD else 0,
            *(
                (
                    p.field,
                    p.kind,
                    p.address.coeffs,
                    p.address.offset - first.address.offset,
                    threads.mask_class(p.guards),
                )
                for p in pieces
            ),
        )
        if key in classes:
            classes[key][1] += 1
        else:
            classes[key] = [group, 1]
    return [c[0] for c in classes.values()], np.array([c[1] for c in classes.values()], dtype=np.int64)


def block_requests(
    compiled: CompiledKernel, fields: dict[str, Field], block, bids, device, uncached: frozenset[str] = frozenset()
) -> BlockRequests:
    """Totals over the blocks `bids`; warps never straddle two blocks. The loads of the arrays in `uncached`
    are counted apart too: an L1 that does not cache them passes each of their sectors on to L2.

    Cached for the compiled instructions: a SPEC's variants that differ in ``read_only`` only share them."""
    l1 = (device.warp_size, device.l1_sector_bytes, device.l1_bank_width_bytes, device.l1_bank_count)
    return _block_requests(
        compiled, tuple(fields.values()), tuple(block), tuple(map(tuple, bids)), l1, frozenset(uncached)
    )


@cached_by_identity(maxsize=128)
def _block_requests(
    compiled: CompiledKernel, field_list: tuple[Field, ...], block, bids, l1: tuple, uncached: frozenset[str]
) -> BlockRequests:
    fields = {f.name: f for f in field_list}
    threads = block_threads(block, bids)
    warp, sector, bank_width, bank_count = l1
    instrs, weight, byte_addr, mask = issued_instructions(compiled, fields, math.lcm(sector, bank_width), threads)
    elem = np.array([fields[i.field].element_bytes for i in instrs], dtype=np.int64)
    is_store = np.array([i.kind is AccessKind.STORE for i in instrs], dtype=bool)

    sectors = distinct_per_row(rows_of(byte_addr // sector, mask, warp))
    per_instr = sectors.reshape(len(instrs), -1).sum(axis=1) * weight
    store_sectors = int(per_instr[is_store].sum())
    load_sectors = int(per_instr[~is_store].sum())
    is_uncached = np.array([i.field in uncached for i in instrs], dtype=bool)
    uncached_sectors = int(per_instr[~is_store & is_uncached].sum())

    cycles = 0
    for eb in np.unique(elem[~is_store]):
        sel = ~is_store & (elem == eb)
        group = max(1, min(warp, bank_count * bank_width // int(eb)))
        words = rows_of(byte_addr[sel] // bank_width, mask[sel], group)
        cycles += int(np.dot(bank_cycles_per_instruction(words, bank_count, sel.sum()), weight[sel]))
    lups = threads.updates(compiled.points)
    return BlockRequests(cycles, load_sectors, store_sectors, lups, uncached_sectors)


@cached_by_identity(maxsize=128)
def load_lines(
    compiled: CompiledKernel, field_list: tuple[Field, ...], block: tuple, bids: tuple, sizes: tuple[int, int, int]
):
    """The load classes of a candidate's representative blocks `bids` (loads that ask for the same lines and
    go as many at a time: `shift_classes`), their counts, and per class and warp the lines and the L2 sectors it
    touches (`sizes`: warp, line and sector bytes). Cached for the compiled instructions: a SPEC's variants that
    differ in ``read_only`` only share them."""
    warp, line_bytes, sector_bytes = sizes
    fields = {f.name: f for f in field_list}
    threads = block_threads(block, bids)
    loads, weight, byte_addr, active = issued_instructions(compiled, fields, line_bytes, threads, AccessKind.LOAD)
    lines = distinct_per_row(rows_of(byte_addr // line_bytes, active, warp)).reshape(len(loads), -1)
    sectors = distinct_per_row(rows_of(byte_addr // sector_bytes, active, warp)).reshape(len(loads), -1)
    for shared in (weight, lines, sectors):
        shared.flags.writeable = False
    return loads, weight, lines, sectors
