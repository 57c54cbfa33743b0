"""Stencils as the HHC model sees them, taken from pystencils assignments: dimensions, radius, shape, flops.

The paper names its benchmarks (Jacobi, Heat, Laplacian, Gradient; sec. 5) but
prints no loop bodies. The constructors below are the usual forms of these
first-order stencils on 4-byte floats; the model itself needs only the
dimensions (which of P1-P29 applies), radius 1 (the footprints P7/P15/P23 assume
it) and, per (stencil, GPU), the measured C_iter. The flops only turn T_alg into
GFLOP/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pystencils as ps
import sympy as sp
from pystencils.sympyextensions import count_operations

from .errors import StencilError


@dataclass(frozen=True)
class HhcStencil:
    name: str
    dims: int
    radius: int
    #: "star" (offsets along one axis at a time) or "box"
    shape: str
    points: int
    flops_per_point: int


def _single_update(assignments) -> ps.Assignment:
    if isinstance(assignments, ps.Assignment):
        return assignments
    if isinstance(assignments, ps.AssignmentCollection):
        subexpressions = assignments.subexpressions
        assignments = list(assignments.main_assignments)
        if subexpressions:
            raise StencilError("the HHC model takes one update without subexpressions; inline them first")
    stores = [a for a in assignments if isinstance(a.lhs, ps.Field.Access)]
    if len(stores) != 1 or len(assignments) != 1:
        raise StencilError(
            f"the HHC model takes a single field update A_t = f(A_t-1), got {len(assignments)} assignments"
        )
    return stores[0]


def stencil_from_assignments(assignments, name: str | None = None) -> HhcStencil:
    """The model's view of a pystencils update `dst[0,...] = f(src[offsets])` (one field read, one written)."""
    update = _single_update(assignments)
    reads = update.rhs.atoms(ps.Field.Access)
    fields_read = {a.field.name for a in reads}
    if len(fields_read) != 1:
        raise StencilError(
            f"the HHC model's stencil reads one field (A_t-1), {update.lhs.field.name} reads {sorted(fields_read) or 'none'}"
        )
    if any(o != 0 for o in update.lhs.offsets):
        raise StencilError(
            f"the update must store at offset 0, stores {update.lhs.field.name}{list(update.lhs.offsets)}"
        )
    offsets = {tuple(int(o) for o in a.offsets) for a in reads}
    dims = update.lhs.field.spatial_dimensions
    radius = max(max(abs(o) for o in off) for off in offsets)
    if radius != 1:
        raise StencilError(
            f"the HHC model's footprints (P7, P15, P23) assume radius 1; {update.lhs.field.name}'s stencil has radius {radius}"
        )
    shape = "star" if all(sum(o != 0 for o in off) <= 1 for off in offsets) else "box"
    ops = count_operations([update.rhs], only_type=None)
    flops = sum(ops[k] for k in ("adds", "muls", "divs", "sqrts"))
    return HhcStencil(name or update.lhs.field.name, dims, radius, shape, len(offsets), flops)


def _fields(dims: int):
    return ps.fields(f"src, dst: float32[{dims}D]")


def _neighbours(src, dims: int) -> list:
    out = []
    for axis in range(dims):
        for sign in (1, -1):
            off = [0] * dims
            off[axis] = sign
            out.append(src[tuple(off)])
    return out


def _scaled(factor, expression):
    """factor * expression as one multiplication (sympy would distribute a number over a sum)."""
    return sp.Mul(factor, expression, evaluate=False)


def jacobi(dims: int) -> list[ps.Assignment]:
    """Average of the point and its 2*dims neighbours."""
    src, dst = _fields(dims)
    centre = src[(0,) * dims]
    points = centre + sum(_neighbours(src, dims))
    return [ps.Assignment(dst[(0,) * dims], _scaled(sp.Rational(1, 2 * dims + 1), points))]


def heat(dims: int) -> list[ps.Assignment]:
    """Explicit heat equation: A + 0.125 (sum over axes of A_+1 - 2 A + A_-1)."""
    src, dst = _fields(dims)
    centre = src[(0,) * dims]
    second_differences = sum(_neighbours(src, dims)) - 2 * dims * centre
    return [ps.Assignment(dst[(0,) * dims], centre + _scaled(sp.Float(0.125), second_differences))]


def laplacian(dims: int) -> list[ps.Assignment]:
    """Sum of the neighbours minus 2*dims times the point."""
    src, dst = _fields(dims)
    centre = src[(0,) * dims]
    return [ps.Assignment(dst[(0,) * dims], sum(_neighbours(src, dims)) - 2 * dims * centre)]


def gradient(dims: int = 2) -> list[ps.Assignment]:
    """A + 1 / sqrt(eps + sum of squared differences to the neighbours): a division and a square root per point."""
    src, dst = _fields(dims)
    centre = src[(0,) * dims]
    squares = sum((centre - n) ** 2 for n in _neighbours(src, dims))
    return [ps.Assignment(dst[(0,) * dims], centre + 1 / sp.sqrt(sp.Float(1e-4) + squares))]


#: the paper's benchmarks (sec. 5; C_iter in Table 4), plus Jacobi 3D of sec. 4.3, by their Table 4 names
PAPER_STENCILS = {
    "jacobi2d": lambda: jacobi(2),
    "heat2d": lambda: heat(2),
    "laplacian2d": lambda: laplacian(2),
    "gradient2d": lambda: gradient(2),
    "jacobi3d": lambda: jacobi(3),
    "heat3d": lambda: heat(3),
    "laplacian3d": lambda: laplacian(3),
}


def paper_stencil(name: str) -> HhcStencil:
    try:
        build = PAPER_STENCILS[name]
    except KeyError:
        raise StencilError(f"unknown paper stencil {name!r}; known: {', '.join(PAPER_STENCILS)}") from None
    return stencil_from_assignments(build(), name)


def paper_stencils(names: Sequence[str] = tuple(PAPER_STENCILS)) -> list[HhcStencil]:
    return [paper_stencil(n) for n in names]
