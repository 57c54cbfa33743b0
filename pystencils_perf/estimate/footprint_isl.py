"""Footprints with islpy: the same counts as `footprint_enum`, by set algebra.

A thread set is an integer set over ``(tx, ty, tz, bx, by, bz)`` (one box per
run of blocks, intersected with the guard); an access maps each thread to the
granules its element overlaps, ``G*g <= base + eb*a(v) + eb - 1`` and
``G*g + G - 1 >= base + eb*a(v)``. The footprint is the cardinality of the
union of the images (`count_val`). Its cost does not grow with the threads of a
box, but a wave is a union of one box per run of blocks, and counting such
unions is slow today (18 s for one candidate at 16^3): describing a wave as one
set bounded by the linear block id is the next step.
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


def _thread_boxes(threads: ThreadSet, guard: tuple[Affine, ...]) -> isl.Set:
    bx, by, bz = threads.block
    cons = [f"{_linear(c)} >= 0" for c in guard]
    pieces = []
    for x_lo, x_hi, y, z in threads.runs.tolist():
        box = [f"0 <= tx < {bx}", f"0 <= ty < {by}", f"0 <= tz < {bz}", f"{x_lo} <= bx <= {x_hi}", f"by = {y}", f"bz = {z}"]
        pieces.append(" and ".join(box + cons))
    return isl.Set("{ [" + ", ".join(_VARS) + "] : " + " or ".join(f"({p})" for p in pieces) + " }")


def touched(instructions: list[Instruction], field: Field, threads: ThreadSet, granule_bytes: int) -> isl.Set:
    """The set of granules `instructions` of `threads` touch in `field` (backend interface)."""
    eb, base, g = field.element_bytes, field.base_offset_bytes, granule_bytes
    total = isl.Set("{ [g] : false }")
    for instr in instructions:
        first_byte = _linear(instr.address, eb, base)
        last_byte = _linear(instr.address, eb, base + eb - 1)
        touch = isl.Map(
            "{ [" + ", ".join(_VARS) + f"] -> [g] : {g}*g <= {last_byte} and {g}*g + {g - 1} >= {first_byte} }}"
        )
        for guard in instr.guards:
            total = total.union(_thread_boxes(threads, guard).apply(touch))
    return total


def count_union(parts: list[isl.Set]) -> int:
    """Distinct granules in the union of `touched` results (backend interface)."""
    total = parts[0]
    for p in parts[1:]:
        total = total.union(p)
    return int(total.count_val().to_python())
