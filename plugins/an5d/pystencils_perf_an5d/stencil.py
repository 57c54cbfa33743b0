"""Stencils as AN5D's model sees them: shape, radius, dimensions, FLOP/cell and executed op mix.

The paper's benchmarks (Table 3) are constructors with the op mixes of the authors'
spreadsheets (SEED_MODELS.md, A25); `problem_from_assignments` derives the same
description from a pystencils assignment.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .devices import check_precision
from .errors import An5dParameterError, StencilShapeError

SHAPES = ("star", "box")
#: Table 5's problem: 16384^2 (2D) or 512^3 (3D) cells, 1000 time steps (paper sec. 6.3).
PAPER_SIZE_BY_DIMS = {2: 16384, 3: 512}
PAPER_ITERATIONS = 1000


@dataclass(frozen=True)
class OpMix:
    """Operations per cell update as the generated code executes them (fast-math: FMA-contracted)."""

    fma: int
    add: int
    mul: int
    other: int = 0

    def __add__(self, other: OpMix) -> OpMix:
        return OpMix(self.fma + other.fma, self.add + other.add, self.mul + other.mul, self.other + other.other)

    @property
    def flops(self) -> int:
        """Floating-point operations, an FMA counting two (A24's 2*FMA + ADD + MUL + OTHER)."""
        return 2 * self.fma + self.add + self.mul + self.other

    @property
    def alu_efficiency(self) -> float:
        """A8: the fraction of the FMA peak these instructions can reach."""
        instructions = self.fma + self.add + self.mul + self.other
        return self.flops / (2 * instructions)


NO_OPS = OpMix(0, 0, 0, 0)


@dataclass(frozen=True)
class Stencil:
    """A single-statement stencil of AN5D's model.

    `flops_per_cell` is what GFLOP/s is counted with (Table 3); `ops` is what runs
    (A25). They differ for some of the paper's benchmarks (j2d9pt: 18 against 22).
    """

    name: str
    shape: str
    radius: int
    dims: int
    flops_per_cell: int
    ops: OpMix

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise StencilShapeError(f"stencil {self.name}: shape {self.shape!r} is neither 'star' nor 'box'")
        if not isinstance(self.radius, int) or self.radius < 1:
            raise StencilShapeError(f"stencil {self.name}: radius {self.radius!r}; AN5D needs a radius of at least 1")
        if self.dims not in (2, 3):
            raise StencilShapeError(f"stencil {self.name}: {self.dims} dimensions; AN5D blocks 2D and 3D stencils")

    @property
    def shared_reads_per_cell(self) -> int:
        """A7, Table 2's 'practical' column: NVCC keeps a column's shared-memory values in registers."""
        r = self.radius
        if self.shape == "star":
            return 2 * r * (self.dims - 1)
        return (2 * r + 1) ** (self.dims - 1) - 1


@dataclass(frozen=True)
class Problem:
    """A stencil run: precision, cells per dimension (all equal in AN5D's model) and time steps."""

    stencil: Stencil
    precision: str
    size: int
    iterations: int = PAPER_ITERATIONS

    def __post_init__(self):
        check_precision(self.precision)
        for name in ("size", "iterations"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise An5dParameterError(f"problem {name} {value!r}: must be a positive integer")

    @property
    def word_bytes(self) -> int:
        return 4 if self.precision == "float" else 8

    @property
    def cells(self) -> int:
        return self.size**self.stencil.dims


def paper_problem(stencil: Stencil, precision: str) -> Problem:
    """The problem of Table 5: 16384^2 or 512^3 cells, 1000 time steps."""
    return Problem(stencil, precision, PAPER_SIZE_BY_DIMS[stencil.dims])


# The paper's benchmarks (Table 3 FLOP/cell; A25 op mixes from the authors' spreadsheets).


def star2d(r: int) -> Stencil:
    return Stencil(f"star2d{r}r", "star", r, 2, 8 * r + 1, OpMix(fma=4 * r, add=0, mul=1))


def box2d(r: int) -> Stencil:
    """Associative: one partial sum per column of 2r+1 cells, then 2r additions (A25)."""
    n = 2 * r + 1
    return Stencil(f"box2d{r}r", "box", r, 2, 2 * n**2 - 1, OpMix(fma=n * 2 * r, add=2 * r, mul=n))


def star3d(r: int) -> Stencil:
    return Stencil(f"star3d{r}r", "star", r, 3, 12 * r + 1, OpMix(fma=6 * r, add=0, mul=1))


def box3d(r: int) -> Stencil:
    """Associative: one partial sum per plane of (2r+1)^2 cells, then 2r additions (A25)."""
    n = 2 * r + 1
    return Stencil(f"box3d{r}r", "box", r, 3, 2 * n**3 - 1, OpMix(fma=n * (n**2 - 1), add=2 * r, mul=n))


def j2d5pt() -> Stencil:
    return Stencil("j2d5pt", "star", 1, 2, 10, OpMix(fma=4, add=0, mul=2))


def j2d9pt() -> Stencil:
    return Stencil("j2d9pt", "star", 2, 2, 18, OpMix(fma=8, add=0, mul=6))


def j2d9pt_gol() -> Stencil:
    return Stencil("j2d9pt-gol", "box", 1, 2, 18, OpMix(fma=8, add=0, mul=4))


def gradient2d() -> Stencil:
    return Stencil("gradient2d", "star", 1, 2, 19, OpMix(fma=4, add=5, mul=1, other=1))


def j3d27pt() -> Stencil:
    return Stencil("j3d27pt", "box", 1, 3, 54, OpMix(fma=26, add=0, mul=4))


def paper_benchmarks() -> dict[str, Stencil]:
    """Table 3's 21 stencils by their Table 5 names, in Table 5's order."""
    synthetic = [make(r) for make in (star2d, box2d) for r in (1, 2, 3, 4)]
    named_2d = [j2d5pt(), j2d9pt(), j2d9pt_gol(), gradient2d()]
    synthetic_3d = [make(r) for make in (star3d, box3d) for r in (1, 2, 3, 4)]
    return {s.name: s for s in [*synthetic, *named_2d, *synthetic_3d, j3d27pt()]}


def benchmark(name: str) -> Stencil:
    stencils = paper_benchmarks()
    if name not in stencils:
        raise StencilShapeError(f"unknown AN5D benchmark {name!r}; known: {', '.join(stencils)}")
    return stencils[name]


# Stencils from pystencils assignments.


def problem_from_assignments(assignments, *, size: int | None = None, iterations: int = PAPER_ITERATIONS) -> Problem:
    """AN5D's description of a single-statement pystencils stencil.

    Shape and radius come from the load offsets (star: no diagonal offsets; box: every
    offset of the (2r+1)^N cube), precision from the stored field, the op mix from the
    right-hand side (`op_mix`), `size` from the fixed field shape minus the radius on
    both sides unless given.
    """
    import pystencils as ps
    import sympy as sp

    store, rhs = _single_store(assignments)
    field = store.lhs.field
    dims = field.spatial_dimensions
    loads = rhs.atoms(ps.Field.Access)
    if not loads:
        raise StencilShapeError(f"the store to {field.name} loads no field: not a stencil")
    if any(not sp.sympify(o).is_Integer for access in loads for o in access.offsets):
        raise StencilShapeError(f"the store to {field.name} loads at non-constant offsets: not a fixed stencil")
    offsets = {tuple(int(o) for o in access.offsets) for access in loads}
    radius = max(abs(o) for offset in offsets for o in offset)
    name = f"{field.name}[{dims}D]"
    if radius == 0:
        raise StencilShapeError(f"stencil {name}: every load is at offset 0 (radius 0); AN5D needs neighbours")
    shape = _shape(name, offsets, radius, dims)
    ops = _associative_box_ops(rhs, radius) if shape == "box" else None
    ops = ops or op_mix(rhs)
    stencil = Stencil(f"{shape}{dims}d{radius}r({field.name})", shape, radius, dims, ops.flops, ops)
    return Problem(stencil, _precision(field), size if size is not None else _interior_size(field, radius), iterations)


def _single_store(assignments):
    """The one field store of `assignments`, its right-hand side with subexpressions substituted."""
    import pystencils as ps

    if isinstance(assignments, ps.Assignment):
        items = [assignments]
    else:
        items = list(getattr(assignments, "all_assignments", None) or assignments)
    if not all(isinstance(a, ps.Assignment) for a in items):
        raise StencilShapeError(
            "AN5D describes pystencils assignments; got something else (pass a list of ps.Assignment)"
        )
    stores = [a for a in items if isinstance(a.lhs, ps.Field.Access)]
    if len(stores) != 1:
        raise StencilShapeError(f"AN5D models single-statement stencils: found {len(stores)} field stores")
    rhs = stores[0].rhs
    for sub in reversed([a for a in items if not isinstance(a.lhs, ps.Field.Access)]):
        rhs = rhs.subs(sub.lhs, sub.rhs)
    return stores[0], rhs


def _shape(name: str, offsets: set[tuple[int, ...]], radius: int, dims: int) -> str:
    if all(sum(1 for o in offset if o) <= 1 for offset in offsets):
        return "star"
    cube = set(itertools.product(range(-radius, radius + 1), repeat=dims))
    if offsets == cube:
        return "box"
    raise StencilShapeError(
        f"stencil {name}: {len(offsets)} offsets with diagonal ones but not the full {2 * radius + 1}^{dims} box "
        "(AN5D's model covers star stencils, without diagonal offsets, and box stencils)"
    )


def _precision(field) -> str:
    dtype = field.dtype.numpy_dtype
    if dtype is not None and dtype.kind == "f" and dtype.itemsize in (4, 8):
        return "float" if dtype.itemsize == 4 else "double"
    raise An5dParameterError(f"field {field.name} has type {field.dtype}; AN5D models float32 and float64 stencils")


def _interior_size(field, radius: int) -> int:
    if not field.has_fixed_shape:
        raise An5dParameterError(f"field {field.name} has no fixed size: pass size= (cells per dimension)")
    interior = {int(n) - 2 * radius for n in field.spatial_shape}
    if len(interior) != 1 or min(interior) < 1:
        raise An5dParameterError(
            f"field {field.name} of shape {tuple(field.spatial_shape)} has interior sizes {sorted(interior)}; "
            "AN5D's model assumes one size in every dimension: pass size="
        )
    return interior.pop()


def op_mix(expr) -> OpMix:
    """Operations of `expr` after fast-math contraction.

    A sum of k terms costs k-1 additions; each addition of a product becomes an FMA
    (a weighted sum of n points: n-1 FMA + 1 MUL). A product of m factors costs m-1
    multiplications (a factor -1 is free: it folds into the FMA or subtraction); a
    division by a constant is a multiplication, one by a variable a reciprocal
    (OTHER) and a multiplication; an integer power n costs n-1 multiplications; every
    other power or function is one OTHER.
    """
    import sympy as sp

    if not expr.args or expr.is_Atom:
        return NO_OPS
    inner = sum((op_mix(arg) for arg in expr.args), NO_OPS)
    if isinstance(expr, sp.Add):
        products = sum(1 for t in expr.args if _top_level_multiplications(t) > 0)
        fused = min(products, len(expr.args) - 1)
        return inner + OpMix(fma=fused, add=len(expr.args) - 1 - fused, mul=-fused)
    multiplications = _top_level_multiplications(expr)
    if multiplications or isinstance(expr, sp.Mul):
        return inner + OpMix(0, 0, multiplications, 0)
    return inner + OpMix(0, 0, 0, 1)


def _top_level_multiplications(expr) -> int:
    """Multiplications of a product (m factors, a factor -1 free) or an integer power n (n-1); else 0."""
    import sympy as sp

    if isinstance(expr, sp.Mul):
        return sum(1 for f in expr.args if f != -1) - 1
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 1:
        return int(expr.exp) - 1
    return 0


def _associative_box_ops(rhs, radius: int) -> OpMix | None:
    """A25's associative evaluation of a weighted box sum: one partial sum per slice, then 2r additions.

    Applies when `rhs` is a sum with one load per term, each term the load times
    constants; None otherwise (then `op_mix` counts the expression as written).
    """
    import pystencils as ps
    import sympy as sp

    if not isinstance(rhs, sp.Add):
        return None
    slices: dict[int, list] = {}
    for term in rhs.args:
        loads = term.atoms(ps.Field.Access)
        if len(loads) != 1:
            return None
        (load,) = loads
        if term.as_independent(load, as_Add=False)[1] != load:
            return None
        slices.setdefault(int(load.offsets[0]), []).append(term)
    if len(slices) != 2 * radius + 1:
        return None
    partial_sums = sum((op_mix(sp.Add(*terms, evaluate=False)) for terms in slices.values()), NO_OPS)
    return partial_sums + OpMix(0, 2 * radius, 0, 0)
