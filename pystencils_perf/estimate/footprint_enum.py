"""Footprints by enumeration: the number of distinct granules a set of threads touches.

One routine serves every cache level: the granule is a 32-B sector (L2<->L1),
a 128-B line (L1 allocation) or the DRAM fetch size, and the thread set is one
block or a wave of blocks.

Instead of listing every address, a thread set is cut into *rows* along x
(fixed tid.y, tid.z, bid.y, bid.z). Along a row an affine address moves by a
constant step, so a row is an interval of addresses; the guard clips it. Rows of
blocks that follow each other in x merge into one row where the address and the
guard only depend on the global x index ``bid.x*bdim.x + tid.x``. The footprint
is then the size of a union of granule intervals: sort and sweep.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from ..kernel import Field
from .addresses import AffineValues, Instruction, KeptByIdentity, cached_by_identity, first_of_equal_rows, offset_groups


@dataclass(frozen=True)
class ThreadSet:
    """Threads of whole blocks: each run is ``(bid.x first, bid.x last, bid.y, bid.z)``.

    A set of consecutive blocks in launch order also keeps the grid and its
    linear block ids ``first .. first+count-1``, so that set algebra can
    describe it as one set instead of one box per run.
    """

    block: tuple[int, int, int]
    runs: np.ndarray  # (n, 4) int64
    key: tuple = ()  # identifies the set among those of one candidate (for caching)
    grid: tuple[int, int, int] | None = None
    linear_ids: tuple[int, int] | None = None  # (first, count)

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def single_block(block, bid) -> ThreadSet:
        """One block; cached: its footprints at each granule and of each array share its rows (`_rows`)."""
        return ThreadSet(tuple(block), np.array([[bid[0], bid[0], bid[1], bid[2]]], dtype=np.int64), ("block", *bid))

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def linear_range(block, grid, first: int, count: int) -> ThreadSet:
        """Blocks ``first .. first+count-1`` in launch order (x fastest, then y, then z); cached: a candidate's
        waves are each other's previous and older waves."""
        gx, gy, _ = grid
        ids = np.arange(first, first + count, dtype=np.int64)
        x, y, z = ids % gx, (ids // gx) % gy, ids // (gx * gy)
        row = y + gy * z
        starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
        ends = np.append(starts[1:], len(ids)) - 1
        runs = np.stack([x[starts], x[ends], y[starts], z[starts]], axis=1)
        runs.flags.writeable = False
        return ThreadSet(tuple(block), runs, ("blocks", first, count), tuple(grid), (first, count))


def _expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``starts[i] .. starts[i]+counts[i]-1``: each member's range index and value."""
    index = np.repeat(np.arange(len(starts)), counts)
    values = starts[index] + np.arange(len(index)) - np.repeat(np.cumsum(counts) - counts, counts)
    return index, values


@functools.lru_cache(maxsize=64)
def _row_threads(by: int, bz: int) -> tuple[np.ndarray, np.ndarray]:
    """tid.y and tid.z of a block's rows (tid.x = 0), y fastest, as addresses usually grow: then a row set's
    firsts come in long ascending runs, which timsort merges instead of sorting; shared, not to be
    written."""
    ty, tz = np.tile(np.arange(by), bz), np.repeat(np.arange(bz), by)
    ty.flags.writeable = tz.flags.writeable = False
    return ty, tz


class _Rows:
    """A thread set's rows (tid.x = 0): each row's u range, and each family's clips of it.

    merged rows: u = bid.x*bdim.x + tid.x over the whole run, bid.x = 0 in the coordinates, in the order (run,
    tid.y and tid.z); otherwise one row per block, u = tid.x, bid.x in the coordinates, in the order (run, tid.y
    and tid.z, bid.x): the rows of one thread row in neighbouring blocks follow each other, so that where they
    are translates that touch (a tile's points strided by the block), `_joined_neighbours` joins them.

    The part of an affine form that does not move along a row is computed once per coefficient vector: the
    constraints of a guard and the addresses under it share few vectors (a fold's points differ by offsets).
    """

    def __init__(self, threads: ThreadSet, merge: bool):
        bx, by, bz = threads.block
        runs = threads.runs
        ty, tz = _row_threads(by, bz)
        n_tyz = len(ty)
        if merge:
            columns = np.zeros((6, len(runs), n_tyz), dtype=np.int64)  # one array per coordinate (`AffineValues`)
            columns[1] = ty
            columns[2] = tz
            columns[4] = runs[:, None, 2]
            columns[5] = runs[:, None, 3]
            self.u_lo = np.repeat(runs[:, 0] * bx, n_tyz)
            self.u_hi = np.repeat((runs[:, 1] + 1) * bx - 1, n_tyz)
            columns = columns.reshape(6, -1)
        else:
            counts = runs[:, 1] - runs[:, 0] + 1
            run, position = _expand(np.zeros(len(runs), dtype=np.int64), counts * n_tyz)
            thread_row, block = np.divmod(position, counts[run])
            columns = np.zeros((6, len(run)), dtype=np.int64)
            columns[1] = ty[thread_row]
            columns[2] = tz[thread_row]
            columns[3] = runs[run, 0] + block
            columns[4] = runs[run, 2]
            columns[5] = runs[run, 3]
            self.u_lo = np.zeros(len(run), dtype=np.int64)
            self.u_hi = np.full(len(run), bx - 1, dtype=np.int64)
        self._start_values = AffineValues(columns[1:])  # tid.x is 0: its column is left out
        self._clips: dict[tuple, tuple] = {}  # ("family", id): (the family, `clips` of it)

    def values(self, coeffs: tuple[int, ...]) -> np.ndarray:
        """``coeffs . v`` at each row's start (u = 0); shared, not to be written."""
        return self._start_values(coeffs[1:])

    def clips(self, family: _Family) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row's u range where every constraint ``alpha*u + beta >= 0`` of each unit of `family` holds, and
        whether it is not empty, shape (units, rows) each; shared, not to be written. The constraints are
        bounded a coefficient vector at a time and gathered for every unit at once (a tile's copy has hundreds of
        guards, each a few of a few dozen constraints); kept for the family (a thread set's footprints at several
        granules)."""
        key = ("family", id(family))
        kept_for = self._clips.get(key)
        if kept_for is not None and kept_for[0] is family:
            return kept_for[1]
        n_lower, n_upper, n_kept = family.bound_counts
        lower = self._bounds(family.lower, n_lower, self.u_lo, 1)
        upper = self._bounds(family.upper, n_upper, self.u_hi, -1)
        lo = lower[family.lower_index].max(axis=1)
        hi = upper[family.upper_index].min(axis=1)
        ok = lo <= hi
        if n_kept:
            ok &= self._bounds(family.kept, n_kept, np.ones(len(self.u_lo), dtype=bool), 0)[family.kept_index].all(
                axis=1
            )
        self._clips[key] = family, (lo, hi, ok)
        return lo, hi, ok

    def _bounds(self, groups, count: int, first: np.ndarray, side: int) -> np.ndarray:
        """`first` and under it what each constraint of `groups` (`_Family.lower` and alike) does to each row: the
        lowest u (`side` 1), the highest (-1) or whether the row is kept (0), shape (1 + count, rows)."""
        out = np.empty((1 + count, len(first)), dtype=first.dtype)
        out[0] = first
        for coeffs, offsets, indices in groups:
            beta = self.values(coeffs)[None, :] + offsets[:, None]
            alpha = coeffs[0]
            if side > 0:
                out[indices] = _ceil_div(-beta, alpha)
            elif side < 0:
                out[indices] = np.floor_divide(beta, -alpha)
            else:
                out[indices] = beta >= 0
        return out


#: the rows of a thread set, for each of its footprints (arrays, kinds, granules)
_ROWS = KeptByIdentity(32)


def _rows(threads: ThreadSet, merge: bool) -> _Rows:
    """`threads`' rows (kept: each family's clips of them are computed once for every footprint)."""
    return _ROWS.get((threads,), (merge,), lambda: _Rows(threads, merge))


def _mergeable(forms, bx: int) -> bool:
    """Rows of neighbouring blocks merge if every form depends on bid.x only through bid.x*bdim.x + tid.x."""
    return all(f.coeffs[3] == bx * f.coeffs[0] for f in forms)


def count_points(conjunctions, threads: ThreadSet) -> int:
    """Threads of `threads` (summed over the conjunctions, e.g. folded points) that satisfy them; all
    conjunctions clipped at once (`_Rows.clips`: a tile's points each have one)."""
    total = 0
    for family in _point_families(tuple(conjunctions), threads.block[0]):
        lo, hi, ok = _rows(threads, family.merge).clips(family)
        total += int(((hi - lo + 1) * ok).sum())
    return total


def _merged_shifts(shifts: np.ndarray, min_row_span: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted shifts of a row set as clusters ``(first shift, last shift)`` whose copies join into one interval.

    Copies of a row of `min_row_span` or more elements, shifted by at most that
    much, overlap or touch: their union is one interval (a stencil's x
    neighbours, 9 of the 25 accesses of the range-4 star, become one).
    """
    if len(shifts) == 1:
        return shifts, shifts
    gap = np.empty(len(shifts) + 1, dtype=bool)
    gap[0] = gap[-1] = True
    np.greater(shifts[1:] - shifts[:-1], min_row_span, out=gap[1:-1])
    return shifts[gap[:-1]], shifts[gap[1:]]


def _ceil_div(a, b):
    return -np.floor_divide(-a, b)


_NO_SHIFT = np.zeros(1, dtype=np.int64)
#: the granule intervals of a piece of a row of blocks, for its translates (`_translated_pieces`): a candidate's
#: waves share them
_PIECE_FOOTPRINTS = KeptByIdentity(1024)


def touched(instructions: list[Instruction], field: Field, threads: ThreadSet, granule_bytes: int) -> np.ndarray:
    """The granules `instructions` of `threads` touch in `field` (backend interface): disjoint closed intervals
    of granule indices in ascending order, shape (n, 2).

    A wave of consecutive blocks is assembled from translates of a few pieces of rows of blocks
    (`_translated_pieces`) where every address moves alike from block to block."""
    return touched_sets(instructions, field, [threads], granule_bytes)[0]


def touched_sets(
    instructions: list[Instruction], field: Field, thread_sets: list[ThreadSet], granule_bytes: int
) -> list[np.ndarray]:
    """`touched` of each of `thread_sets`, sets of blocks of one launch (backend interface, optional): a
    candidate's waves are cut into pieces of the same few classes, whose footprints and translates are made
    once for all of them."""
    if thread_sets and all(t.grid is not None and t.block == thread_sets[0].block for t in thread_sets):
        translated = _translated_pieces(instructions, field, thread_sets, granule_bytes)
        if translated is not None:
            return translated
    if not thread_sets or not _contiguous_rows(instructions, thread_sets[0].block[0]):
        return [_touched_rows(instructions, field, threads, granule_bytes) for threads in thread_sets]
    return [_granules(_elements(instructions, field, threads), field, granule_bytes) for threads in thread_sets]


#: the elements a thread set touches, for its footprints at each granule (a block's sectors and lines)
_ELEMENTS = KeptByIdentity(256)


def _elements(instructions, field: Field, threads: ThreadSet) -> np.ndarray:
    """The element intervals `instructions` of `threads` touch in `field` (kept per thread set)."""
    return _ELEMENTS.get(
        (instructions, field),
        (threads.block, threads.grid, threads.key),
        lambda: _element_rows(instructions, field, threads),
    )


def _element_rows(instructions, field: Field, threads: ThreadSet) -> np.ndarray:
    """`_touched_rows` in elements: granules of one element each, from the field's start."""
    return _touched_rows(instructions, replace(field, base_offset_bytes=0), threads, field.element_bytes)


def _granules(elements: np.ndarray, field: Field, granule_bytes: int) -> np.ndarray:
    """The granules that disjoint element intervals in ascending order cover, as `touched` gives them: their
    firsts and lasts stay in order when mapped to granules, so the maximal runs are one sweep (`_disjoint`)."""
    eb, base = field.element_bytes, field.base_offset_bytes
    return _disjoint(
        (base + eb * elements[:, 0]) // granule_bytes, (base + eb * elements[:, 1] + eb - 1) // granule_bytes
    )


def _translated_pieces(instructions, field: Field, thread_sets, granule_bytes: int) -> list[np.ndarray] | None:
    """`touched_sets` as the union of translates of pieces of each set's runs of blocks (kept per instruction
    tuple); None where the addresses do not all move alike.

    A block at (bid.x, bid.y, bid.z) moves every address by ``M = m . bid`` elements. Two pieces of rows of blocks
    whose ``M`` differ by whole granules (``element_bytes * dM``; their residues mod the granule equal) touch
    granule sets shifted by ``element_bytes * dM / granule`` if no guard clips them differently. In the middle
    of a row every constraint that moves with the block holds on every thread: there a piece of L blocks is a
    translate of any other such piece of L blocks, and a run's middle is cut into pieces of 1, 2, 4, ... blocks
    (the binary digits of its length), a few lengths for all of a candidate's waves. The blocks at the row's
    ends, where a guard that moves with bid.x clips, are translates of those of another row if the constraints
    that move with bid.y and bid.z hold; what neither covers (rows a guard clips in y) is counted row by row.
    Where every row is contiguous, pieces are kept as element intervals, which shift by any move: then the
    residue does not part them."""
    moves = _block_moves(instructions)
    if moves is None:
        return None
    (move_x, move_y, move_z), moving = moves
    block = thread_sets[0].block
    runs = np.concatenate([threads.runs for threads in thread_sets])
    run_set = np.repeat(np.arange(len(thread_sets)), [len(threads.runs) for threads in thread_sets])
    # the smallest value of each moving constraint over a block's threads is ``low + a . bid``
    lowest_tid = {coeffs: sum(min(0, coeffs[i] * (n - 1)) for i, n in enumerate(block)) for coeffs, _ in moving}
    # the blocks of each run on whose every thread every moving constraint holds: lo .. hi
    lo, hi = runs[:, 0].copy(), runs[:, 1].copy()
    for coeffs, offsets in moving:
        a = coeffs
        rest = (offsets[:, None] + lowest_tid[a] + a[4] * runs[:, 2] + a[5] * runs[:, 3]).min(axis=0)
        if a[3] > 0:
            np.maximum(lo, _ceil_div(-rest, a[3]), out=lo)
        elif a[3] < 0:
            np.minimum(hi, np.floor_divide(rest, -a[3]), out=hi)
        else:
            hi[rest < 0] = lo[rest < 0] - 1
    middle = lo <= hi
    # pieces (first block, last block, bid.y, bid.z): the middles, and the ends before and after them
    ends = np.concatenate(
        [
            np.stack([runs[:, 0], np.where(middle, lo - 1, runs[:, 1]), runs[:, 2], runs[:, 3]], axis=1),
            np.stack([np.where(middle, hi + 1, runs[:, 1] + 1), runs[:, 1], runs[:, 2], runs[:, 3]], axis=1)[middle],
        ]
    )
    nonempty = ends[:, 0] <= ends[:, 1]
    ends, end_set = ends[nonempty], np.concatenate([run_set, run_set[middle]])[nonempty]
    # an end stands for its translates in y and z where the constraints that move with bid.y or bid.z hold on it
    standing_end = np.ones(len(ends), dtype=bool)
    for coeffs, offsets in moving:
        a = coeffs
        if a[4] or a[5]:
            low = (
                lowest_tid[a] + np.minimum(a[3] * ends[:, 0], a[3] * ends[:, 1]) + a[4] * ends[:, 2] + a[5] * ends[:, 3]
            )
            standing_end &= low + offsets.min() >= 0
    # the middles cut into pieces of the lengths of their binary digits, longest first; a piece's class: its length
    # (a middle) or its blocks (an end), and its move's residue
    middles = np.stack([lo, hi, runs[:, 2], runs[:, 3]], axis=1)[middle]
    length = middles[:, 1] - middles[:, 0] + 1
    standing = ends[standing_end]
    pieces, keys = [standing], [np.stack([np.ones(len(standing), dtype=np.int64), standing[:, 0], standing[:, 1]], 1)]
    piece_set = [end_set[standing_end]]
    if len(middles):
        # every middle's set binary digits at once, longest first: a digit's piece starts past the longer ones
        digits = np.arange(int(length.max()).bit_length() - 1, -1, -1)
        digit, m = np.nonzero((length[None, :] >> digits[:, None]) & 1)
        size, past = np.left_shift(1, digits[digit]), digits[digit] + 1
        first = middles[m, 0] + ((length[m] >> past) << past)
        pieces.append(np.stack([first, first + size - 1, middles[m, 2], middles[m, 3]], axis=1))
        keys.append(np.stack([np.zeros_like(first), size, np.zeros_like(first)], axis=1))
        piece_set.append(run_set[middle][m])
    pieces, keys, piece_set = np.concatenate(pieces), np.concatenate(keys), np.concatenate(piece_set)
    eb, base = field.element_bytes, field.base_offset_bytes
    move = move_x * pieces[:, 0] + move_y * pieces[:, 2] + move_z * pieces[:, 3]
    firsts, lasts, sets = [], [], []
    if len(pieces):
        # where every row is contiguous, a piece's elements shift by any move: its class is its shape alone, and
        # its element intervals become granules after the shift; else classes keep the move's residue
        contiguous = _contiguous_rows(instructions, block[0])
        residue = np.zeros_like(move) if contiguous else (eb * move) % granule_bytes
        class_first, class_of = first_of_equal_rows(np.concatenate([keys, residue[:, None]], axis=1))
        order = np.argsort(class_of, kind="stable")
        bounds = np.searchsorted(class_of[order], np.arange(len(class_first) + 1)).tolist()
        for c, f in enumerate(class_first.tolist()):
            if contiguous and keys[f, 0] == 0:
                move0, pattern = _middle_elements(instructions, field, block, pieces[f], int(move[f]), int(move_x))
            else:
                move0, pattern = _PIECE_FOOTPRINTS.get(
                    (instructions, field),
                    (block, eb if contiguous else granule_bytes, *keys[f].tolist(), int(residue[f])),
                    lambda: (
                        int(move[f]),
                        _piece_footprint(instructions, field, block, pieces[f], granule_bytes, contiguous),
                    ),
                )
            members = order[bounds[c] : bounds[c + 1]]
            shift = move[members] - move0
            if contiguous:  # element intervals, shifted, as granules
                firsts.append(((base + eb * (pattern[None, :, 0] + shift[:, None])) // granule_bytes).ravel())
                lasts.append(((base + eb * (pattern[None, :, 1] + shift[:, None]) + eb - 1) // granule_bytes).ravel())
            else:
                shift = (eb * shift) // granule_bytes
                firsts.append((pattern[None, :, 0] + shift[:, None]).ravel())
                lasts.append((pattern[None, :, 1] + shift[:, None]).ravel())
            sets.append(np.repeat(piece_set[members], len(pattern)))
    if not standing_end.all():  # every set's ends at once: a row's intervals never leave its set
        clipped = ~standing_end
        rows = _touched_rows_by_set(instructions, field, block, ends[clipped], end_set[clipped], granule_bytes)
        for s, rest in rows:
            firsts.append(rest[:, 0])
            lasts.append(rest[:, 1])
            sets.append(np.full(len(rest), s))
    return _unions_by_set(firsts, lasts, sets, len(thread_sets))


def _touched_rows_by_set(instructions, field: Field, block, runs: np.ndarray, run_set: np.ndarray, granule_bytes: int):
    """(set, `_touched_rows` of its runs) for each set that has runs among `runs`."""
    return [
        (s, _touched_rows(instructions, field, ThreadSet(block, runs[run_set == s]), granule_bytes))
        for s in np.unique(run_set).tolist()
    ]


def _unions_by_set(firsts: list, lasts: list, sets: list, count: int) -> list[np.ndarray]:
    """`_union` of the intervals of each of `count` sets, the set of each interval in `sets`."""
    if not firsts:
        return [np.empty((0, 2), dtype=np.int64) for _ in range(count)]
    if count == 1:
        return [_union(firsts, lasts)]
    first, last, of = np.concatenate(firsts), np.concatenate(lasts), np.concatenate(sets)
    order = np.argsort(of, kind="stable")
    bounds = np.searchsorted(of[order], np.arange(count + 1)).tolist()
    first, last = first[order], last[order]
    return [_union([first[a:b]], [last[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]


def _middle_elements(instructions, field: Field, block, piece: np.ndarray, move: int, move_x: int):
    """(`move`, the elements that the blocks of a middle piece (first, last, bid.y, bid.z) touch, for a first block
    that moves addresses by `move`), kept by the piece's length: a middle of L blocks is one of L // 2 and its
    translate by L // 2 blocks along x (the rest of them), and every block of a middle moves alike, so its elements
    are one union of two kept footprints where `_touched_rows` would walk every row of each of its blocks."""
    size = int(piece[1] - piece[0]) + 1

    def footprint():
        if size == 1:
            return move, _piece_footprint(instructions, field, block, piece, field.element_bytes, True)
        half = size // 2
        parts = []
        for start, length in ((0, half), (half, size - half)):
            part = piece.copy()
            part[0], part[1] = piece[0] + start, piece[0] + start + length - 1
            part_move = move + start * move_x
            kept_move, pattern = _middle_elements(instructions, field, block, part, part_move, move_x)
            parts.append(pattern + (part_move - kept_move))
        return move, _union([p[:, 0] for p in parts], [p[:, 1] for p in parts])

    return _PIECE_FOOTPRINTS.get((instructions, field), (block, field.element_bytes, 0, size, 0, 0), footprint)


def _piece_footprint(instructions, field: Field, block, piece: np.ndarray, granule_bytes: int, elements: bool):
    """The granules, or with `elements` the elements, that `instructions` of the blocks of one piece of a row of
    blocks (first, last, bid.y, bid.z) touch."""
    threads = ThreadSet(block, piece[None, :])
    return (
        _element_rows(instructions, field, threads)
        if elements
        else _touched_rows(instructions, field, threads, granule_bytes)
    )


@cached_by_identity(maxsize=64)
def _contiguous_rows(instructions, bx: int) -> bool:
    """Whether every address of `instructions` moves by at most one element from thread to thread along x."""
    return all(abs(family.coeffs[0]) <= 1 for family in _families(instructions, bx))


@cached_by_identity(maxsize=64)
def _block_moves(instructions) -> tuple | None:
    """How far every address of `instructions` moves per block in x, y and z (elements), and their guards'
    constraints that move with the block, offsets by coefficient vector; None where the addresses do not all
    move alike."""
    copies = shifted_copies(instructions)
    moves = {coeffs[3:6] for coeffs, _, _ in copies}
    if len(moves) != 1:
        return None
    moving: dict[tuple, set] = {}
    for _, guards, _ in copies:
        for conj in guards:
            for c in conj:
                if any(c.coeffs[3:6]):
                    moving.setdefault(c.coeffs, set()).add(c.offset)
    return moves.pop(), [(coeffs, np.array(sorted(offsets), dtype=np.int64)) for coeffs, offsets in moving.items()]


@dataclass(frozen=True, eq=False)
class _Family:
    """Instructions of one coefficient vector whose rows merge alike (`_touched_rows`): each conjunction of each
    offset group's guard is a unit, its shifted copies on the rows it keeps; the units' constraints by what they
    bound (lower, upper, whether a row is kept: the sign of the u coefficient), each unit's as indices (0: none)."""

    coeffs: tuple[int, ...]
    merge: bool
    units: list[tuple[tuple, np.ndarray]]
    lower: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]  # (coefficients, offsets, indices) per vector
    lower_index: np.ndarray
    upper: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]
    upper_index: np.ndarray
    kept: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]
    kept_index: np.ndarray
    bound_counts: tuple[int, int, int]  # how many constraints bound from below, from above, keep rows
    unit_shifts: np.ndarray  # every unit's shifts, one after the other
    unit_of: np.ndarray  # the unit of each of them
    first_shift: np.ndarray  # where each unit's shifts start
    single: np.ndarray  # the units of one shift


def _constraint_index(units, constraints: list, which) -> np.ndarray:
    """(units, k) indices (from 1) into `constraints` of the constraints of each unit that `which` selects, after
    a first column of 0 (the row's own bound, which every unit's clip starts from), padded with 0."""
    position = {c: k + 1 for k, c in enumerate(constraints)}
    per_unit = [[position[c] for c in conj if which(c)] for conj, _ in units]
    index = np.zeros((len(units), 1 + max(map(len, per_unit), default=0)), dtype=np.int64)
    for u, ks in enumerate(per_unit):
        index[u, 1 : 1 + len(ks)] = ks
    return index


def _by_coefficients(constraints: list) -> list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]:
    """`constraints` by coefficient vector: its offsets and the constraints' indices (from 1) in the list (a tile's
    guards differ in offsets)."""
    groups: dict[tuple, tuple[list, list]] = {}
    for k, c in enumerate(constraints):
        offsets, indices = groups.setdefault(c.coeffs, ([], []))
        offsets.append(c.offset)
        indices.append(k + 1)
    return [(coeffs, np.array(o, dtype=np.int64), np.array(i, dtype=np.int64)) for coeffs, (o, i) in groups.items()]


def _family(coeffs: tuple, merge: bool, units: list) -> _Family:
    """A `_Family` of `units` (conjunction, shifts)."""
    constraints = list(dict.fromkeys(c for conj, _ in units for c in conj))
    lower = [c for c in constraints if c.coeffs[0] > 0]
    upper = [c for c in constraints if c.coeffs[0] < 0]
    kept = [c for c in constraints if c.coeffs[0] == 0]
    sizes = np.array([len(shifts) for _, shifts in units], dtype=np.int64)
    return _Family(
        coeffs,
        merge,
        units,
        _by_coefficients(lower),
        _constraint_index(units, lower, lambda c: c.coeffs[0] > 0),
        _by_coefficients(upper),
        _constraint_index(units, upper, lambda c: c.coeffs[0] < 0),
        _by_coefficients(kept),
        _constraint_index(units, kept, lambda c: c.coeffs[0] == 0),
        (len(lower), len(upper), len(kept)),
        np.concatenate([shifts for _, shifts in units]),
        np.repeat(np.arange(len(units)), sizes),
        np.cumsum(sizes) - sizes,
        sizes == 1,
    )


@cached_by_identity(maxsize=64)
def _point_families(conjunctions: tuple, bx: int) -> list[_Family]:
    """`count_points`' conjunctions as families of one unit each, by how their rows merge."""
    by_merge: dict[bool, list] = {}
    for conj in conjunctions:
        by_merge.setdefault(_mergeable(conj, bx), []).append((conj, _NO_SHIFT))
    return [_family((), merge, units) for merge, units in by_merge.items()]


@cached_by_identity(maxsize=64)
def _families(instructions, bx: int) -> list[_Family]:
    """`instructions` (of one array and kind) as `_Family`s for blocks `bx` threads wide; kept for the instruction
    tuple, which a candidate's footprints of every thread set share."""
    members: dict[tuple, list[tuple[tuple, np.ndarray]]] = {}
    for coeffs, guards, shifts in shifted_copies(instructions):
        forms = [c for conj in guards for c in conj]
        merge = _mergeable(forms, bx) and coeffs[3] == bx * coeffs[0]
        members.setdefault((coeffs, merge), []).extend((conj, shifts) for conj in guards)
    return [_family(coeffs, merge, units) for (coeffs, merge), units in members.items()]


def _touched_rows(instructions, field: Field, threads: ThreadSet, granule_bytes: int) -> np.ndarray:
    """`touched` of every row of `threads` at once.

    The intervals are built from the firsts and the lasts of the intervals the threads
    touch, each sorted on its own and paired afresh: every granule is covered by
    as many pairs as before (``#firsts <= g`` minus ``#lasts < g``), so the union
    is the same, and two 1-D sorts cost less than ordering pairs.

    Instructions that differ only by a constant offset (a stencil's neighbours)
    are shifted copies of one row set: rows are clipped once per group, and
    copies shifted by less than a row's length are joined before sorting.
    """
    out = []
    for family in _families(instructions, threads.block[0]):
        rows = _rows(threads, family.merge)
        step, b_rows = family.coeffs[0], rows.values(family.coeffs)
        lo, hi, ok = rows.clips(family)  # (units, rows)
        if len(family.units) > 1:
            whole = ok & (lo == rows.u_lo) & (hi == rows.u_hi)
            if whole.any():
                # rows that the same units leave whole (a tile's points away from the edges; a copy's iterations
                # that reach a row of the block): there those units' copies are shifted copies of one row set,
                # joined as one group's are
                first, group = _first_of_equal_columns(whole)
                for g, r in enumerate(first.tolist()):
                    if whole[:, r].any():
                        kept = group == g
                        shifts = np.unique(family.unit_shifts[whole[family.unit_of, r]])
                        out.append(
                            _row_intervals(
                                step, rows.u_lo[kept], rows.u_hi[kept], b_rows[kept], shifts, field, granule_bytes
                            )
                        )
                ok = ok & ~whole  # left: the rows a unit clips
        clipped = ok.any(axis=1)
        single = family.single & clipped
        if np.count_nonzero(single) > 1:  # units of one copy each (a tile's copy iterations): their rows at once
            unit, row = np.nonzero(ok & single[:, None])
            out.append(
                _row_intervals(
                    step,
                    lo[unit, row],
                    hi[unit, row],
                    b_rows[row] + family.unit_shifts[family.first_shift[unit]],
                    _NO_SHIFT,
                    field,
                    granule_bytes,
                )
            )
            clipped &= ~single
        for u in np.flatnonzero(clipped).tolist():
            kept = ok[u]
            out.append(
                _row_intervals(step, lo[u][kept], hi[u][kept], b_rows[kept], family.units[u][1], field, granule_bytes)
            )
    return _union([f for f, _ in out], [la for _, la in out])


def _first_of_equal_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the distinct columns of a boolean `table`: the index of each one's first occurrence, and for every
    column the number of its distinct column (`first_of_equal_rows` of the columns packed 64 to a word)."""
    words = -(-len(table) // 64)
    packed = np.zeros((table.shape[1], 8 * words), dtype=np.uint8)
    packed[:, : -(-len(table) // 8)] = np.packbits(table, axis=0).T
    return first_of_equal_rows(packed.view(np.uint64))


def _row_intervals(
    step: int, lo: np.ndarray, hi: np.ndarray, b: np.ndarray, shifts: np.ndarray, field: Field, granule_bytes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Granule intervals of copies of rows (element ``step * u + b`` for u in ``lo .. hi``) shifted by each of
    `shifts` (sorted): firsts and lasts, neighbours joined."""
    eb, base = field.element_bytes, field.base_offset_bytes
    if abs(step) * eb <= granule_bytes:
        row_first = (step * lo if step >= 0 else step * hi) + b
        row_last = (step * hi if step >= 0 else step * lo) + b
        shift_first, shift_last = _merged_shifts(shifts, int(np.min(row_last - row_first)) + 1)
        e_first = row_first + shift_first[:, None]
        e_last = row_last + shift_last[:, None]
    else:  # strided: every element is its own run
        rep, u = _expand(lo, hi - lo + 1)
        e_first = step * u + b[rep] + shifts[:, None]
        e_last = e_first
    first = (base + eb * e_first) // granule_bytes
    last = (base + eb * e_last + eb - 1) // granule_bytes
    return _joined_neighbours(first.ravel(), last.ravel())


@cached_by_identity(maxsize=64)
def shifted_copies(instructions) -> list[tuple[tuple[int, ...], tuple, np.ndarray]]:
    """`instructions` (of one field and kind) grouped by coefficients and guards: ``(coeffs, guards, sorted
    offsets)`` per group (`addresses.offset_groups`), kept for the instruction tuple `touched` is called with for
    every thread set of a candidate."""
    return [(coeffs, guards, np.sort(offsets)) for (_, _, coeffs, guards), offsets in offset_groups(instructions)]


#: a union is counted on an array of one counter per granule of its span where the span is at most this many
#: granules per interval (else by sorting), where counting costs less than sorting, and at most
#: `COUNTED_SPAN_MAX` granules, so that the counters take at most a few tens of MB
COUNTED_SPAN_PER_INTERVAL = 16
COUNTED_SPAN_MAX = 1 << 22


def _union(firsts: list[np.ndarray], lasts: list[np.ndarray]) -> np.ndarray:
    """The union of the closed intervals ``firsts[k][i] .. lasts[k][i]`` as disjoint intervals (`_disjoint`).

    Where the intervals lie close together (a wave's rows), the granules' coverage is a running sum of +1 at
    each first and -1 past each last, counted with `np.bincount` in time linear in intervals and span;
    elsewhere the firsts and the lasts are sorted."""
    first, last = np.concatenate(firsts), np.concatenate(lasts)
    if len(first) == 0:
        return np.empty((0, 2), dtype=np.int64)
    low = int(first.min())
    span = int(last.max()) - low + 1
    if span > min(COUNTED_SPAN_PER_INTERVAL * len(first), COUNTED_SPAN_MAX):
        return _disjoint(np.sort(first, kind="stable"), np.sort(last, kind="stable"))
    depth = np.cumsum(np.bincount(first - low, minlength=span + 1) - np.bincount(last - low + 1, minlength=span + 1))
    covered = np.zeros(span + 2, dtype=np.int8)
    covered[1:-1] = depth[:-1] > 0
    edges = np.diff(covered)  # +1 where a run of covered granules starts, -1 one past its end
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    intervals = np.empty((len(starts), 2), dtype=np.int64)
    intervals[:, 0] = starts + low
    intervals[:, 1] = ends + low
    return intervals


def _joined_neighbours(firsts: np.ndarray, lasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals with each one joined to the one before it where it starts no earlier and no later than one past
    that one's last: then the two cover one interval. The union is the same, with fewer intervals to sort; rows
    come in the order of `_Rows`, so that the rows of a thread row in neighbouring blocks join."""
    if len(firsts) < 2:
        return firsts, lasts
    joins = (firsts[1:] >= firsts[:-1]) & (firsts[1:] <= lasts[:-1] + 1)
    starts = np.flatnonzero(np.concatenate(([True], ~joins)))
    if len(starts) == len(firsts):
        return firsts, lasts
    return firsts[starts], np.maximum.reduceat(lasts, starts)


def _disjoint(firsts: np.ndarray, lasts: np.ndarray) -> np.ndarray:
    """The union of closed intervals given as their firsts and lasts, each sorted on its own, as disjoint intervals
    in ascending order, shape (n, 2), none touching the next.

    Sweeping in order of the firsts, the intervals before the i-th reach up to the (i-1)-th last, since the lasts
    are sorted too: a new interval starts where a first lies beyond that reach. A wave's rows, tile points and
    neighbours overlap, so its union has far fewer intervals than it has rows: later unions of several waves
    sort those few.
    """
    if len(firsts) == 0:
        return np.empty((0, 2), dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], firsts[1:] > lasts[:-1] + 1)))
    intervals = np.empty((len(starts), 2), dtype=np.int64)
    intervals[:, 0] = firsts[starts]
    intervals[:-1, 1] = lasts[starts[1:] - 1]
    intervals[-1, 1] = lasts[-1]
    return intervals


def count_union(parts: list[np.ndarray]) -> int:
    """Distinct granules in the union of `touched` results (backend interface)."""
    union = parts[0] if len(parts) == 1 else _union([p[:, 0] for p in parts], [p[:, 1] for p in parts])
    return int((union[:, 1] - union[:, 0]).sum()) + len(union)


def count_overlap(a: np.ndarray, b: np.ndarray) -> int:
    """Granules in both of two `touched` results (backend interface): ``|a| + |b| - |a u b|``."""
    return count_union([a]) + count_union([b]) - count_union([a, b])
