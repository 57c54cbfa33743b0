"""Address expressions -> integer affine forms for one block size.

Once ``blockDim`` is a number, every harvested address is affine in the six
thread coordinates ``v = (tid.x, tid.y, tid.z, bid.x, bid.y, bid.z)``:
``address = coeffs . v + offset`` (elements). Per-thread loops (thread folding)
are unrolled here, and an access that several iterations share is one
instruction, as in the folded code, where it is loaded once into a register.

A guard becomes a tuple of affine constraints ``coeffs . v + offset >= 0``; an
instruction shared by folded points carries one conjunction per point (it runs
if any of them is active).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import HarvestError
from ..kernel import BDIM, BID, TID, AccessKind, KernelModel

COORDS = TID + BID  # the order of the coefficient vectors


@dataclass(frozen=True)
class Affine:
    coeffs: tuple[int, ...]  # over COORDS
    offset: int

    def evaluate(self, coords: np.ndarray) -> np.ndarray:
        """Values at thread coordinates of shape (..., 6)."""
        return coords @ np.asarray(self.coeffs, dtype=np.int64) + self.offset


@dataclass(frozen=True)
class Instruction:
    """One load or store instruction of every thread, for one block size."""

    field: str
    kind: AccessKind
    address: Affine  # elements
    guards: tuple[tuple[Affine, ...], ...]  # disjunction of conjunctions of `>= 0` constraints

    def active(self, coords: np.ndarray) -> np.ndarray:
        """Which threads (rows of `coords`) execute this instruction."""
        mask = np.zeros(coords.shape[:-1], dtype=bool)
        for conj in self.guards:
            mask |= satisfies(conj, coords)
        return mask


def satisfies(conjunction: tuple[Affine, ...], coords: np.ndarray) -> np.ndarray:
    """Which rows of `coords` satisfy every ``>= 0`` constraint of `conjunction`."""
    mask = np.ones(coords.shape[:-1], dtype=bool)
    for c in conjunction:
        mask &= c.evaluate(coords) >= 0
    return mask


@dataclass(frozen=True)
class CompiledKernel:
    """The instructions of a (folded) kernel for one block size, and the domain guard per point."""

    instructions: tuple[Instruction, ...]
    points: tuple[tuple[Affine, ...], ...]  # one conjunction per folded point: is this point active?

    def for_field(self, name: str, kind: AccessKind) -> list[Instruction]:
        return [i for i in self.instructions if i.field == name and i.kind is kind]


def _affine(expr: sp.Expr, where: str) -> Affine:
    expr = sp.expand(expr)
    coeffs = []
    for s in COORDS:
        c = expr.coeff(s)
        if not c.is_Integer:
            raise HarvestError(f"{where}: {expr} is not affine with integer coefficients in {s}")
        coeffs.append(int(c))
    rest = expr - sum(c * s for c, s in zip(coeffs, COORDS))
    if not rest.is_Integer:
        raise HarvestError(f"{where}: {expr} is not affine in the thread and block indices")
    return Affine(tuple(coeffs), int(rest))


def _constraints(pred: sp.Basic, where: str) -> tuple[Affine, ...]:
    """A conjunction of relations as `>= 0` constraints over integers."""
    if pred is sp.true:
        return ()
    if isinstance(pred, sp.And):
        return tuple(c for arg in pred.args for c in _constraints(arg, where))
    if isinstance(pred, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
        diff = pred.gts - pred.lts  # >= 0, or > 0 for strict relations
        strict = isinstance(pred, (sp.StrictLessThan, sp.StrictGreaterThan))
        return (_affine(diff - 1 if strict else diff, where),)
    if isinstance(pred, sp.Equality):
        d = pred.lhs - pred.rhs
        return (_affine(d, where), _affine(-d, where))
    raise HarvestError(f"{where}: guard {pred} is not a conjunction of affine inequalities")


def compile_kernel(model: KernelModel, block: tuple[int, int, int]) -> CompiledKernel:
    """Unroll `model`'s loops and fix ``blockDim = block``."""
    bdim = dict(zip(BDIM, block))
    loop_values = [lp.values for lp in model.loops]
    merged: dict[tuple, list] = {}
    points = []
    for values in itertools.product(*loop_values):
        subs = dict(bdim)
        subs.update({lp.counter: v for lp, v in zip(model.loops, values)})
        domain = model.domain.xreplace(subs)
        if domain is not sp.false:
            points.append(_constraints(domain, f"kernel {model.name!r}: domain guard"))
        for acc in model.accesses:
            where = f"kernel {model.name!r}: {acc.kind.value} of field {acc.field!r}"
            pred = acc.predicate.xreplace(subs)
            if pred is sp.false:
                continue
            address = _affine(acc.address.xreplace(subs), where)
            key = (acc.field, acc.kind, address)
            guards = merged.setdefault(key, [])
            conj = _constraints(pred, where)
            if conj not in guards:
                guards.append(conj)
    instructions = tuple(Instruction(f, k, a, tuple(g)) for (f, k, a), g in merged.items())
    return CompiledKernel(instructions, tuple(points))


def thread_coords(block: tuple[int, int, int], bid: tuple[int, int, int]) -> np.ndarray:
    """Coordinates (tid, bid) of every thread of one block, in warp order (x fastest)."""
    bx, by, bz = block
    tz, ty, tx = np.meshgrid(np.arange(bz), np.arange(by), np.arange(bx), indexing="ij")
    n = bx * by * bz
    coords = np.empty((n, 6), dtype=np.int64)
    coords[:, 0], coords[:, 1], coords[:, 2] = tx.ravel(), ty.ravel(), tz.ravel()
    coords[:, 3:] = bid
    return coords
