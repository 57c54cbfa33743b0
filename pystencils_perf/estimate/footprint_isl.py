"""Footprints with islpy: the same counts as `footprint_enum`, by set algebra.

A footprint is a set of granule indices ``g`` (floor division of byte
addresses by the granularity, alignment included): ``g`` belongs to it if some
thread of the thread set, in some instruction, touches a byte of granule ``g``:
``G*g <= base + eb*a + eb - 1`` and ``G*g + G - 1 >= base + eb*a`` for the
element address ``a``. Its size is isl's `count_val` of that set, whose cost
grows steeply with overlapping disjuncts and constraints that are not boxes,
so `touched` builds the set where unions are cheap.
`benchmarks/bench_isl.py` measures the cost against enumeration; `COST_NOTE`
states it for the command line.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field as dataclass_field

import islpy as isl

from ..kernel import Field
from .addresses import Affine, Instruction
from .footprint_enum import ThreadSet

#: what `--backend isl` costs, from `benchmarks/bench_isl.py` (one core of the 2-core development machine)
COST_NOTE = (
    "isl backend: exact set algebra, slower than enumeration (auto): per candidate about 0.03-0.13 s "
    "for a 512x384x256 float 27-point box stencil on H100 and 0.4-0.8 s for a 640x512x512 range-4 star "
    "or a 128^3 D3Q19 kernel, where enumeration needs 10-60 ms (benchmarks/bench_isl.py)"
)

BlockBox = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # (first, last) block index per axis


def block_boxes(threads: ThreadSet) -> list[BlockBox]:
    """The blocks of `threads` as disjoint boxes of block indices: at most five for a wave, one per run otherwise."""
    if threads.linear_ids is None:
        return [((x_lo, x_hi), (y, y), (z, z)) for x_lo, x_hi, y, z in threads.runs.tolist()]
    (gx, gy, _), (first, count) = threads.grid, threads.linear_ids
    plane = gx * gy
    boxes, i, end = [], first, first + count
    while i < end:
        x, y, z = i % gx, (i // gx) % gy, i // plane
        if x or end - i < gx:  # a partial row of blocks
            n = min(gx - x, end - i)
            boxes.append(((x, x + n - 1), (y, y), (z, z)))
        elif y or end - i < plane:  # full rows of one plane
            n = min(gy - y, (end - i) // gx) * gx
            boxes.append(((0, gx - 1), (y, y + n // gx - 1), (z, z)))
        else:  # full planes
            n = (end - i) // plane * plane
            boxes.append(((0, gx - 1), (0, gy - 1), (z, z + n // plane - 1)))
        i += n
    return boxes


@dataclass
class _Piece:
    """One disjunct: element address ``constant + sum coeff*var`` over variables with interval ranges,
    subject to ``sum coeff*var + constant >= 0`` constraints."""

    ranges: dict[str, tuple[int, int]]
    address: dict[str, int]
    constant: int
    constraints: list[tuple[dict[str, int], int]] = dataclass_field(default_factory=list)

    def clip(self) -> bool:
        """Fold single-variable constraints into ranges; False if the piece is empty."""
        kept = []
        for coeffs, const in self.constraints:
            const += sum(c * self.ranges[v][0] for v, c in coeffs.items() if c and _fixed(self.ranges[v]))
            coeffs = {v: c for v, c in coeffs.items() if c and not _fixed(self.ranges[v])}
            if not coeffs:
                if const < 0:
                    return False
            elif len(coeffs) == 1:
                ((v, c),) = coeffs.items()
                lo, hi = self.ranges[v]
                self.ranges[v] = (max(lo, -(const // c)), hi) if c > 0 else (lo, min(hi, const // -c))
            else:
                kept.append((coeffs, const))
        self.constraints = kept
        return all(lo <= hi for lo, hi in self.ranges.values())

    def absorb(self, offset_var: str, index_var: str) -> bool:
        """Merge an offset variable into a global index whose address coefficient is a multiple m of its stride.

        ``c*u + s*k = s*(m*u + k)``, and ``m*u + k`` over two intervals is an interval when k spans at least
        |m| values (a Minkowski sum; folding by m makes the index move by m rows).
        """
        c_off, c_idx = self.address.get(offset_var, 0), self.address.get(index_var, 0)
        if not c_idx or c_idx % c_off or any(index_var in coeffs for coeffs, _ in self.constraints):
            return False
        m = c_idx // c_off
        (k_lo, k_hi), (u_lo, u_hi) = self.ranges[offset_var], self.ranges[index_var]
        if k_lo == k_hi and k_lo % m == 0:  # a shift by whole steps of the index
            self.ranges[index_var] = (u_lo + k_lo // m, u_hi + k_lo // m)
        elif k_hi - k_lo + 1 >= abs(m):
            self.ranges[index_var] = (m * u_lo + k_lo, m * u_hi + k_hi) if m > 0 else (m * u_hi + k_lo, m * u_lo + k_hi)
            self.address[index_var] = c_off
        else:
            return False
        del self.ranges[offset_var], self.address[offset_var]
        return True

    def fold_fixed_offsets(self) -> None:
        """Offset variables of one value are constants (then pieces of several groups share a signature)."""
        for v in [v for v, (lo, hi) in self.ranges.items() if v.startswith("k") and lo == hi]:
            self.constant += self.address.pop(v) * self.ranges.pop(v)[0]

    def element_text(self, basis: tuple[int, ...]) -> str:
        """The piece in the field's element space ``[w_0, ...]`` (address ``sum basis_i * w_i``), in isl's syntax.

        Each variable goes to the axis of the largest stride dividing its coefficient; all pieces of a
        field share this space, so their union is formed there, where pieces are boxes or strided boxes.
        """
        sums: list[list[str]] = [[str(d)] for d in _in_basis(self.constant, basis)]
        for v, c in self.address.items():
            if c:
                axis = next(i for i, stride in enumerate(basis) if c % stride == 0)
                sums[axis].append(f"{c // basis[axis]}*{v}")
        conds = [f"w{i} = {' + '.join(terms)}" for i, terms in enumerate(sums)]
        conds += [f"{lo} <= {v} <= {hi}" for v, (lo, hi) in self.ranges.items()]
        conds += [
            " + ".join([f"{c}*{v}" for v, c in coeffs.items()] + [str(const)]) + " >= 0"
            for coeffs, const in self.constraints
        ]
        space = ", ".join(f"w{i}" for i in range(len(basis)))
        return f"[{space}] : exists ({', '.join(self.ranges)} : {' and '.join(conds)})"


def _granule_map(basis: tuple[int, ...], element_bytes: int, base_bytes: int, granule_bytes: int) -> isl.Map:
    """Element space -> the granules each element's bytes overlap (floor division, alignment included)."""
    eb, g = element_bytes, granule_bytes
    space = ", ".join(f"w{i}" for i in range(len(basis)))
    byte = " + ".join([f"{eb * stride}*w{i}" for i, stride in enumerate(basis)] + [str(base_bytes)])
    return isl.Map(f"{{ [{space}] -> [g] : {g}*g <= {byte} + {eb - 1} and {g}*g + {g - 1} >= {byte} }}")


def _fixed(rng: tuple[int, int]) -> bool:
    return rng[0] == rng[1]


def _thread_variables(box: BlockBox, block, forms: list[Affine]):
    """Variables of one block box: per axis a global index ``bid*bdim + tid`` where every form allows, else both.

    Returns the ranges and, per form, its coefficients over the variables.
    """
    ranges: dict[str, tuple[int, int]] = {}
    per_form: list[dict[str, int]] = [{} for _ in forms]
    for axis, (n, (b_lo, b_hi)) in enumerate(zip(block, box)):
        if all(f.coeffs[3 + axis] == n * f.coeffs[axis] for f in forms):
            name = "u" + "xyz"[axis]
            ranges[name] = (b_lo * n, b_hi * n + n - 1)
            for coeffs, f in zip(per_form, forms):
                coeffs[name] = f.coeffs[axis]
        else:
            ranges["t" + "xyz"[axis]], ranges["b" + "xyz"[axis]] = (0, n - 1), (b_lo, b_hi)
            for coeffs, f in zip(per_form, forms):
                coeffs["t" + "xyz"[axis]], coeffs["b" + "xyz"[axis]] = f.coeffs[axis], f.coeffs[3 + axis]
    return ranges, per_form


def _stride_basis(field: Field) -> tuple[int, ...]:
    """The field's distinct strides, largest first, ending in 1: the axes of its offset boxes."""
    return tuple(sorted({abs(s) for s in field.strides if s} | {1}, reverse=True))


def _in_basis(offset: int, basis: tuple[int, ...]) -> tuple[int, ...]:
    """Coordinates of an element offset in `basis`, each rounded to the nearest multiple (a stencil's dx, dy, dz)."""
    out = []
    for stride in basis[:-1]:
        k = (2 * offset + stride) // (2 * stride)
        out.append(k)
        offset -= k * stride
    return (*out, offset)


def offset_boxes(offsets: list[int], basis: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Disjoint boxes ``(lowest, highest)`` of coordinates in `basis` that together hold exactly `offsets`.

    Greedy: from the smallest point left, grow along the last axis, then the next, while the whole face is present.
    """
    left = {_in_basis(o, basis) for o in offsets}
    boxes = []
    while left:
        lo = min(left)
        hi = list(lo)
        for axis in reversed(range(len(lo))):
            while True:
                spans = [range(a, b + 1) for a, b in zip(lo, hi)]
                spans[axis] = [hi[axis] + 1]
                if all(p in left for p in itertools.product(*spans)):
                    hi[axis] += 1
                else:
                    break
        left -= set(itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi))))
        boxes.append((lo, tuple(hi)))
    return boxes


def _pieces(instructions: list[Instruction], field: Field, threads: ThreadSet):
    """The disjuncts of a footprint: per block box, group of shifted instructions, offset box and guard conjunction."""
    groups: dict[tuple, list[int]] = {}
    for instr in instructions:
        groups.setdefault((instr.address.coeffs, instr.guards), []).append(instr.address.offset)
    basis = _stride_basis(field)
    for (coeffs, guards), offsets in groups.items():
        origin = min(offsets)
        forms = [Affine(coeffs, 0)] + [c for conj in guards for c in conj]
        boxes = offset_boxes([o - origin for o in offsets], basis)
        for box in block_boxes(threads):
            ranges, per_form = _thread_variables(box, threads.block, forms)
            position = 1
            for conj in guards:
                constraints = [(per_form[position + i], c.offset) for i, c in enumerate(conj)]
                position += len(conj)
                for lo, hi in boxes:
                    piece = _Piece(dict(ranges), dict(per_form[0]), origin, list(constraints))
                    for i, (stride, k_lo, k_hi) in enumerate(zip(basis, lo, hi)):
                        piece.ranges[f"k{i}"] = (k_lo, k_hi)
                        piece.address[f"k{i}"] = stride
                    if not piece.clip():
                        continue
                    for k in [v for v in piece.ranges if v.startswith("k")]:
                        next((u for u in ("ux", "uy", "uz") if u in piece.ranges and piece.absorb(k, u)), None)
                    piece.fold_fixed_offsets()
                    yield piece


def touched(instructions: list[Instruction], field: Field, threads: ThreadSet, granule_bytes: int) -> isl.Set:
    """The set of granules `instructions` of `threads` touch in `field` (backend interface).

    `count_val` scans points after making the set's disjuncts disjoint, and that step is what grows steeply
    with the number of overlapping disjuncts (one per instruction, 27 for a box stencil) and with constraints
    that are not boxes (a wave bounded by its linear block id). So the set is built where unions are cheap:

    - a wave of consecutive blocks is at most five boxes of blocks (`block_boxes`: a partial row, full rows
      of a plane, full planes, full rows, a partial row);
    - along an axis where every address and guard depends on the block and thread index only through the
      global index ``bid*bdim + tid``, that index is one variable with an interval range;
    - instructions that differ only by a constant offset (a stencil's neighbours) are one piece per box of
      offsets (`offset_boxes`: the offsets written in the field's strides); guards on one variable clip its
      range, and an offset variable is added to an index whose address coefficient is a multiple of its
      stride (a Minkowski sum of intervals);
    - every piece is written in the field's element space, one coordinate per stride, where pieces are
      (strided) boxes without existential variables that coalesce cheaply: they are united there, and only
      that union is mapped to granules.
    """
    basis = _stride_basis(field)
    texts = [p.element_text(basis) for p in _pieces(instructions, field, threads)]
    if not texts:
        return isl.Set("{ [g] : false }")
    elements = isl.Set("{ " + "; ".join(texts) + " }").coalesce()
    return elements.apply(_granule_map(basis, field.element_bytes, field.base_offset_bytes, granule_bytes))


def count_union(parts: list[isl.Set]) -> int:
    """Distinct granules in the union of `touched` results (backend interface)."""
    total = parts[0]
    for p in parts[1:]:
        total = total.union(p)
    return int(total.coalesce().count_val().to_python())


def count_overlap(a: isl.Set, b: isl.Set) -> int:
    """Granules in both of two `touched` results (backend interface): the intersection."""
    return int(a.intersect(b).coalesce().count_val().to_python())
