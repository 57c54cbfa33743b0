"""Footprints with islpy: the same counts as `footprint_enum`, by set algebra.

A thread set is one integer set over ``(tx, ty, tz, bx, by, bz)``: the block
box, and for a wave the range of linear block ids
``first <= bx + gx*by + gx*gy*bz < first + count`` (one constraint, however
many rows of blocks the wave spans), intersected with an instruction's guard.
An access maps each thread to the granules its element overlaps,
``G*g <= base + eb*a(v) + eb - 1`` and ``G*g + G - 1 >= base + eb*a(v)``
(floor division by the granularity, alignment included). The footprint is
the cardinality of the union of the images (`count_val`); the overlap of two
waves is the cardinality of the intersection of their footprints.

Building the sets costs milliseconds whatever the grid, but `count_val` on a
union of overlapping images grows steeply with the footprint: about 1 s for a
wave of the 25-point stencil at 64^3 and more than a minute at 80^3, where
enumeration needs 5-15 ms (`benchmarks/bench_rank.py`). It can also stall on
particular small sets: one single-block set of a reversed, folded access ran
for more than ten minutes in property testing. The backend is an exact,
independent cross-check of the enumeration on small grids.
"""

from __future__ import annotations

import islpy as isl

from ..kernel import Field
from .addresses import Affine, Instruction
from .footprint_enum import ThreadSet

_VARS = ("tx", "ty", "tz", "bx", "by", "bz")


def _linear(form: Affine, scale: int = 1, shift: int = 0) -> str:
    """``scale * form + shift`` in isl's syntax (integer literals only)."""
    return " + ".join([f"{scale * c}*{v}" for c, v in zip(form.coeffs, _VARS) if c] + [str(scale * form.offset + shift)])


def _thread_constraints(threads: ThreadSet) -> str:
    """The threads of `threads` in isl's syntax: one conjunction for consecutive blocks, else one box per run."""
    bx, by, bz = threads.block
    box = f"0 <= tx < {bx} and 0 <= ty < {by} and 0 <= tz < {bz}"
    if threads.linear_ids is not None:
        (gx, gy, gz), (first, count) = threads.grid, threads.linear_ids
        return (
            f"{box} and 0 <= bx < {gx} and 0 <= by < {gy} and 0 <= bz < {gz}"
            f" and {first} <= bx + {gx}*by + {gx * gy}*bz < {first + count}"
        )
    runs = [f"({box} and {x_lo} <= bx <= {x_hi} and by = {y} and bz = {z})" for x_lo, x_hi, y, z in threads.runs.tolist()]
    return "(" + " or ".join(runs) + ")"


def touched(instructions: list[Instruction], field: Field, threads: ThreadSet, granule_bytes: int) -> isl.Set:
    """The set of granules `instructions` of `threads` touch in `field` (backend interface)."""
    eb, base, g = field.element_bytes, field.base_offset_bytes, granule_bytes
    where = _thread_constraints(threads)
    pieces = []
    for instr in instructions:
        first_byte = _linear(instr.address, eb, base)
        last_byte = _linear(instr.address, eb, base + eb - 1)
        for guard in instr.guards:
            cons = " and ".join([where] + [f"{_linear(c)} >= 0" for c in guard])
            pieces.append(
                f"[g] : exists ({', '.join(_VARS)} : {cons} and {g}*g <= {last_byte} and {g}*g + {g - 1} >= {first_byte})"
            )
    if not pieces:
        return isl.Set("{ [g] : false }")
    return isl.Set("{ " + "; ".join(pieces) + " }").coalesce()


def count_union(parts: list[isl.Set]) -> int:
    """Distinct granules in the union of `touched` results (backend interface)."""
    total = parts[0]
    for p in parts[1:]:
        total = total.union(p)
    return int(total.count_val().to_python())


def count_overlap(a: isl.Set, b: isl.Set) -> int:
    """Granules in both of two `touched` results (backend interface): the intersection."""
    return int(a.intersect(b).count_val().to_python())
