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

import collections
import functools
import itertools
import math
import operator
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
import sympy as sp

from ..errors import HarvestError
from ..kernel import BDIM, BID, FOLD_COUNTERS, INEQUALITIES, TID, AccessKind, KernelModel, nonnegative_form

COORDS = TID + BID  # the order of the coefficient vectors


class Affine(NamedTuple):
    """``coeffs . v + offset``; a tuple, because compiling a candidate hashes thousands of them."""

    coeffs: tuple[int, ...]  # over COORDS
    offset: int

    def evaluate(self, coords: np.ndarray) -> np.ndarray:
        """Values at thread coordinates of shape (..., 6)."""
        return coords @ np.asarray(self.coeffs, dtype=np.int64) + self.offset


class Instruction(NamedTuple):
    """One load or store instruction of every thread, for one block size (a tuple: a tiled kernel compiles
    thousands per candidate)."""

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
    #: instructions (their positions in `instructions`) that a warp issues as one, each lane at the address of the
    #: one whose guard it passes: an access's classes of lanes (`Loop.splits_lanes`)
    joined: tuple[tuple[int, ...], ...] = ()

    def for_field(self, name: str, kind: AccessKind) -> tuple[Instruction, ...]:
        return self._by_field.get((name, kind), ())

    #: loads a warp issues at once under a conjunction, where the code decides it (`Access.loads_in_flight`)
    _in_flight: ClassVar[dict] = {}

    def loads_in_flight(self, guards) -> int:
        """How many loads of an instruction under `guards` a warp issues before it waits, where the code decides
        it (a loop unrolled at run time); 0 where the performance model estimates it."""
        return next((n for conj in guards if (n := self._in_flight.get(conj))), 0) if self._in_flight else 0

    @functools.cached_property
    def issues_alone(self) -> np.ndarray:
        """Per instruction, whether a warp issues it on its own: it is in none of the `joined` groups."""
        alone = np.ones(len(self.instructions), dtype=bool)
        alone[[i for group in self.joined for i in group]] = False
        return alone

    @functools.cached_property
    def alone(self) -> tuple[Instruction, ...]:
        """The instructions that a warp issues on their own, in order: all of them but the `joined` ones."""
        if not self.joined:
            return self.instructions
        return tuple(itertools.compress(self.instructions, self.issues_alone))

    @functools.cached_property
    def _by_field(self) -> dict[tuple[str, AccessKind], tuple[Instruction, ...]]:
        """The instructions per field and kind, in order (the estimators ask for them thousands of times)."""
        by_field: dict[tuple[str, AccessKind], list[Instruction]] = {}
        for i in self.instructions:
            by_field.setdefault((i.field, i.kind), []).append(i)
        return {k: tuple(v) for k, v in by_field.items()}


@dataclass(frozen=True)
class _Terms:
    """An expression affine in COORDS once blockDim and loop counters are numbers.

    Each term is ``(coefficient, coordinate index or -1, numeric symbols multiplied in)``.
    """

    terms: tuple[tuple[int, int, tuple[sp.Symbol, ...]], ...]

    def at(self, values: dict) -> Affine:
        coeffs = [0] * len(COORDS)
        offset = 0
        for c, coord, factors in self.terms:
            for f in factors:
                c *= values[f]
            if coord < 0:
                offset += c
            else:
                coeffs[coord] += c
        return Affine(tuple(coeffs), offset)


class _FormTable:
    """Many `_Terms` evaluated together: each distinct one a row of coefficients over the distinct monomials (a
    coordinate or the offset, times a product of numeric symbols) that they use, so that evaluating all of them
    for every iteration of their loops is one matrix product per coordinate. A stencil's loads share one guard:
    its constraints are one row each."""

    def __init__(self, forms: list[_Terms]):
        #: each distinct form's row
        self.row = {form: row for row, form in enumerate(dict.fromkeys(forms))}
        monomials: dict[tuple[int, tuple[sp.Symbol, ...]], int] = {}
        entries = []
        for row, form in enumerate(self.row):
            for c, coord, factors in form.terms:
                column = monomials.setdefault((coord, tuple(sorted(factors, key=str))), len(monomials))
                entries.append((row, column, c))
        self.coefficients = np.zeros((len(self.row), len(monomials)), dtype=np.int64)
        for row, column, c in entries:
            self.coefficients[row, column] += c
        self.monomials = list(monomials)

    def values(self, values: dict, count: int) -> np.ndarray:
        """Each form for each of `count` sets of values (each value a number or an array of `count` numbers):
        shape (forms, count, 7), the coefficients over `COORDS` and then the offset."""
        products = np.ones((len(self.monomials), count), dtype=np.int64)
        for m, (_, factors) in enumerate(self.monomials):
            for f in factors:
                products[m] *= values[f]
        table = np.zeros((len(self.row), count, len(COORDS) + 1), dtype=np.int64)
        for column, (coord, _) in enumerate(self.monomials):
            table[:, :, coord] += self.coefficients[:, column, None] * products[column]  # coord -1: the offset
        return table


def _terms(expr: sp.Expr, numeric: set, where: str) -> _Terms:
    terms, problem = _cached_terms(expr, frozenset(numeric))
    if problem:
        raise HarvestError(f"{where}: {problem}")
    return terms


@functools.lru_cache(maxsize=8192)
def _cached_terms(expr: sp.Expr, numeric: frozenset) -> tuple[_Terms | None, str]:
    """`_terms` of `expr`, or what keeps it from being a polynomial of them; cached, since the variants of a
    tiled kernel, and its folds, repeat most expressions."""
    try:  # as it is: a harvest's addresses come expanded (`kernel.require_affine`), and a polynomial's terms pass
        return _uncached_terms(expr, numeric), ""
    except _NotTerms:
        pass
    try:  # products expanded first, at half the cost of every expansion: see `kernel.require_affine`
        return _uncached_terms(sp.expand_mul(expr), numeric), ""
    except _NotTerms:
        try:
            return _uncached_terms(sp.expand(expr), numeric), ""
        except _NotTerms as e:
            return None, str(e)


class _NotTerms(Exception):
    pass


def _uncached_terms(expr: sp.Expr, numeric: frozenset) -> _Terms:
    terms = []
    for monom, coeff in expr.as_coefficients_dict().items():
        if not coeff.is_Integer:
            raise _NotTerms(f"{expr} has a non-integer coefficient {coeff}")
        variables = []
        for factor in sp.Mul.make_args(monom):
            if factor is sp.S.One:
                continue
            base, exponent = factor.as_base_exp()
            if not (isinstance(base, sp.Symbol) and exponent.is_Integer and exponent > 0):
                raise _NotTerms(f"{expr} is not a polynomial in the thread and block indices")
            variables += [base] * int(exponent)
        unknown = {v for v in variables if v not in COORDS and v not in numeric}
        if unknown:
            raise _NotTerms(f"{expr} depends on {sorted(map(str, unknown))}")
        coords = [COORDS.index(v) for v in variables if v in COORDS]
        if len(coords) > 1:
            raise _NotTerms(f"{expr} is not affine in the thread and block indices")
        factors = tuple(v for v in variables if v not in COORDS)
        terms.append((int(coeff), coords[0] if coords else -1, factors))
    return _Terms(tuple(terms))


def _constraint_terms(pred: sp.Basic, numeric: set, where: str) -> tuple[_Terms, ...]:
    """A conjunction of relations as `>= 0` constraints over integers."""
    if pred is sp.true:
        return ()
    if isinstance(pred, sp.And):
        return tuple(c for arg in pred.args for c in _constraint_terms(arg, numeric, where))
    if isinstance(pred, INEQUALITIES):
        return (_terms(nonnegative_form(pred), numeric, where),)
    if isinstance(pred, sp.Equality):
        d = pred.lhs - pred.rhs
        return (_terms(d, numeric, where), _terms(-d, numeric, where))
    raise HarvestError(f"{where}: guard {pred} is not a conjunction of affine inequalities")


def _loop_symbols(*terms: _Terms) -> set:
    return {f for t in terms for _, _, factors in t.terms for f in factors}


class KeptByIdentity:
    """Values kept for big immutable objects (a kernel model, a candidate's instructions, a device) and hashable
    keys, the least recently used dropped first: keyed by the objects' identity, since hashing a model hashes
    every access's expression, and a tile's instructions number thousands. An entry keeps its objects alive,
    so that their ids are not reused while it lives."""

    def __init__(self, size: int):
        self.size = size
        self.entries: collections.OrderedDict = collections.OrderedDict()

    def _kept(self, objects: tuple, key: tuple):
        """The full key of `objects` and `key`, and its entry where it is kept for these very objects (else None)."""
        full_key = (tuple(map(id, objects)), key)
        entry = self.entries.get(full_key)
        if entry is not None and all(kept is obj for kept, obj in zip(entry[0], objects)):
            return full_key, entry
        return full_key, None

    def get(self, objects: tuple, key: tuple, compute):
        """The value kept for `objects` and `key`, or `compute()`'s, then kept."""
        full_key, entry = self._kept(objects, key)
        if entry is not None:
            self.entries.move_to_end(full_key)
            return entry[1]
        value = compute()
        self.entries[full_key] = (objects, value)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value

    def holds(self, objects: tuple, key: tuple) -> bool:
        """Whether a value is kept for `objects` and `key`."""
        return self._kept(objects, key)[1] is not None

    def clear(self) -> None:
        self.entries.clear()


def cached_by_identity(maxsize: int):
    """`functools.lru_cache` for functions of a big immutable object and hashable arguments, keyed by the
    object's identity (`KeptByIdentity`)."""

    def decorate(function):
        kept = KeptByIdentity(maxsize)

        @functools.wraps(function)
        def cached(obj, *args):
            return kept.get((obj,), args, lambda: function(obj, *args))

        def seed(obj, value, *args):
            """Keep `value` as the function's for `obj` and `args`, where it was computed otherwise."""
            kept.get((obj,), args, lambda: value)

        cached.cache_clear = kept.clear
        cached.seed = seed
        return cached

    return decorate


@cached_by_identity(maxsize=16)
def _symbolic_forms(model: KernelModel):
    """Everything symbolic about `model`, done once: terms of addresses, guards and the domain, and the
    accesses (by position) grouped by the loops their address or guard depends on."""
    numeric = set(BDIM) | {lp.counter for lp in model.loops} | {symbol for symbol, _ in model.block_values}
    domain = _constraint_terms(model.domain, numeric, f"kernel {model.name!r}: domain guard")
    accesses = []
    by_loops: dict[tuple[int, ...], list[int]] = {}
    for order, acc in enumerate(model.accesses):
        where = f"kernel {model.name!r}: {acc.kind.value} of field {acc.field!r}"
        address, guard = _terms(acc.address, numeric, where), _constraint_terms(acc.predicate, numeric, where)
        accesses.append((acc.field, acc.kind, address, guard, acc.loads_in_flight))
        used = _loop_symbols(address, *guard)
        by_loops.setdefault(tuple(i for i, lp in enumerate(model.loops) if lp.counter in used), []).append(order)
    return domain, accesses, by_loops


@cached_by_identity(maxsize=64)
def _group_table(model: KernelModel, relevant: tuple[int, ...]) -> _FormTable:
    """The address and then the guard's constraints of each access of a loop group (`_symbolic_forms`), in the
    group's order, as one table."""
    _, accesses, by_loops = _symbolic_forms(model)
    return _FormTable([form for order in by_loops[relevant] for form in (accesses[order][2], *accesses[order][3])])


@cached_by_identity(maxsize=64)
def _common_thread_constraints(model: KernelModel, relevant: tuple[int, ...]) -> tuple:
    """The constraints that every access of a loop group (`_symbolic_forms`) is under and that no block index
    enters, by the loops they depend on: (positions in `relevant`, a table of those constraints) pairs. An
    iteration of those loops that one of them rules out for every thread of the block is no instruction, whatever
    the access and the other loops (a copy unrolled at run time: the classes of lanes that no lane is in), and is
    left out before the accesses' forms are evaluated."""
    _, accesses, by_loops = _symbolic_forms(model)
    common = None
    for order in by_loops[relevant]:
        own = {t for t in accesses[order][3] if all(coord < len(TID) for _, coord, _ in t.terms)}
        common = own if common is None else common & own
    by_used: dict[tuple[int, ...], list[_Terms]] = {}
    for t in common or ():
        used = _loop_symbols(t)
        by_used.setdefault(tuple(k for k, i in enumerate(relevant) if model.loops[i].counter in used), []).append(t)
    return tuple((used, _FormTable(forms)) for used, forms in by_used.items())


@dataclass(frozen=True)
class _GuardGroup:
    """The accesses of a loop group under one guard, as `_compile` needs them for every block: their positions
    in the model, the rows of their addresses in the group's table, their (field, kind) pairs (the distinct ones,
    and which of them each access is) and the loads in flight the model says they issue."""

    guard: tuple
    orders: np.ndarray
    address_rows: np.ndarray
    field_kinds: tuple
    field_kind_index: np.ndarray
    loads_in_flight: frozenset


@cached_by_identity(maxsize=64)
def _guard_groups(model: KernelModel, relevant: tuple[int, ...], guarded: bool) -> tuple[_GuardGroup, ...]:
    """The accesses of a loop group (`_symbolic_forms`) by guard, in the order the guards first occur: a tile's
    thousands of accesses share a handful of guards, and every block of a variant groups them alike. Without
    guards (`guarded` false) they are one group."""
    _, accesses, by_loops = _symbolic_forms(model)
    table = _group_table(model, relevant)
    by_guard: dict[tuple, list[int]] = {}
    for order in by_loops[relevant]:
        by_guard.setdefault(accesses[order][3] if guarded else (), []).append(order)
    groups = []
    for guard, orders in by_guard.items():
        pairs = [accesses[o][:2] for o in orders]
        distinct = tuple(dict.fromkeys(pairs))
        position = {pair: k for k, pair in enumerate(distinct)}
        groups.append(
            _GuardGroup(
                guard,
                np.array(orders, dtype=np.int64),
                np.array([table.row[accesses[o][2]] for o in orders], dtype=np.int64),
                distinct,
                np.array([position[pair] for pair in pairs], dtype=np.int64),
                frozenset(accesses[o][4] for o in orders if accesses[o][4] and accesses[o][1] is AccessKind.LOAD),
            )
        )
    return tuple(groups)


@cached_by_identity(maxsize=256)
def guards_compiled(model: KernelModel, block: tuple[int, int, int]) -> bool:
    """Whether the code for `block` has its guards (`KernelModel.guards_compiled_when`); kept per model and block,
    which the compiler and the request counts both ask (sympy decides it)."""
    if model.guards_compiled_when is sp.true:
        return True
    value = model.guards_compiled_when.xreplace(dict(zip(BDIM, block)))
    if value not in (sp.true, sp.false):
        raise HarvestError(
            f"kernel {model.name!r}: guards_compiled_when {model.guards_compiled_when} "
            f"is not decided by blockDim = {block} alone"
        )
    return value is sp.true


def never_satisfied(conjunction: tuple[Affine, ...], block: tuple[int, int, int]) -> bool:
    """Whether some constraint that depends on the thread index alone fails for every thread of `block`."""
    for c in conjunction:
        if not any(c.coeffs[3:]):
            largest = c.offset + sum(max(0, k * (n - 1)) for k, n in zip(c.coeffs[:3], block))
            if largest < 0:
                return True
    return False


class _CodeOf:
    """What of a kernel model its compiled instructions depend on (accesses, loops, guards), hashed once: models
    that differ elsewhere (a SPEC's ``read_only`` on and off) compile to the same instructions, and share them
    and what is cached for them (`touched`'s footprints)."""

    __slots__ = ("model", "key", "hash")

    def __init__(self, model: KernelModel):
        self.model = model  # the first model seen with this code, for its name in errors
        self.key = (
            model.accesses,
            model.loops,
            model.domain,
            model.merges_accesses_across_guards,
            model.guards_compiled_when,
            model.block_values,
        )
        self.hash = hash(self.key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, _CodeOf) and self.hash == other.hash and self.key == other.key)


@cached_by_identity(maxsize=64)
def _code_of(model: KernelModel) -> _CodeOf:
    return _CodeOf(model)


#: a variant's blocks (up to about 60 in a Kernel Tuner space), for the next variant with the same code
COMPILED_KEPT = 128


def compile_kernel(model: KernelModel, block: tuple[int, int, int]) -> CompiledKernel:
    """Unroll `model`'s loops and fix ``blockDim = block``.

    Cached by the model's code (`_CodeOf`): the volume estimator and the throughput model's request counts
    compile the same candidate, and so do the variants of a SPEC that differ in ``read_only`` only.
    """
    return _compile(_code_of(model), tuple(block))


@functools.lru_cache(maxsize=COMPILED_KEPT)
def _compile(code: _CodeOf, block: tuple[int, int, int]) -> CompiledKernel:
    """`compile_kernel` of the first model seen with `code`.

    An access that several iterations make at one address is one instruction
    (active where any of them is), unless the model says its code keeps one per
    distinct guard of its own loops (`KernelModel.merges_accesses_across_guards`);
    iterations of a fold always share it. Each access is unrolled over the loops
    it depends on only; instructions and their guards keep the order of the
    fully unrolled code (iteration, then access).
    """
    model = code.model
    domain, _, by_loops = _symbolic_forms(model)
    guarded = guards_compiled(model, block)
    if not guarded:
        # no guards: an access still runs over its guard's loops too, which only repeats its instructions
        domain = ()
    loops = model.loops
    sizes = [len(lp.values) for lp in loops]
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(loops))]
    blockdim = {**dict(zip(BDIM, block)), **model.block_values_for(block)}
    points = []
    update_loops = [lp for lp in loops if lp.updates]
    for values in itertools.product(*(lp.values for lp in update_loops)):
        numbers = {**blockdim, **{lp.counter: v for lp, v in zip(update_loops, values)}}
        point = tuple(t.at(numbers) for t in domain)
        if not never_satisfied(point, block):
            points.append(point)
    unfolded = dict.fromkeys(FOLD_COUNTERS, 0)  # a fold's points share their loads whatever their guards
    # one row per (iteration, access) that some thread may run: instruction key columns, its conjunction's id,
    # and (iteration, access) for the order of the unrolled code
    keys, conj_ids, firsts, conjunction_of, merge_of, field_kinds = [], [], [], {}, {}, {}
    joins = []  # per row (access, iteration of the loops that do not split lanes), or -1 where none splits them
    in_flight: dict[int, int] = {}  # conjunction id: loads a warp issues at once under it (`Access.loads_in_flight`)
    for relevant in by_loops:
        # every iteration of the loops the group depends on at once: counter values as arrays
        common = _common_thread_constraints(model, relevant) if guarded else ()
        positions = _iterations(loops, relevant, common, blockdim, block)
        count = len(positions)
        if not count:
            continue
        numbers = {
            **blockdim,
            **{
                loops[i].counter: np.asarray(loops[i].values, dtype=np.int64)[positions[:, k]]
                for k, i in enumerate(relevant)
            },
        }
        iterations = positions @ np.array([strides[i] for i in relevant], dtype=np.int64)
        splitting = [k for k, i in enumerate(relevant) if loops[i].splits_lanes]
        if splitting:  # one instruction per iteration of the other loops: their iterations' classes of lanes join
            kept = positions.copy()
            kept[:, splitting] = 0
            join_iterations = kept @ np.array([strides[i] for i in relevant], dtype=np.int64)
        table = _group_table(model, relevant)
        forms = table.values(numbers, count)
        merge_forms = None if model.merges_accesses_across_guards else table.values({**numbers, **unfolded}, count)
        for g in _guard_groups(model, relevant, guarded):  # a stencil's loads share one guard
            runs, conj_id, merge_id = _guard_rows(g.guard, table, forms, merge_forms, block, conjunction_of, merge_of)
            for n in g.loads_in_flight:
                for c in np.unique(conj_id[runs]).tolist():  # the fewest in flight where loads of one guard differ
                    in_flight[c] = min(in_flight.get(c, n), n)
            n_runs, n_access = int(runs.sum()), len(g.orders)
            ids = np.array([field_kinds.setdefault(pair, len(field_kinds)) for pair in g.field_kinds], dtype=np.int64)
            rows = np.empty((n_access, n_runs, 9), dtype=np.int64)
            rows[:, :, 0] = ids[g.field_kind_index][:, None]
            rows[:, :, 1:8] = forms[g.address_rows][:, runs]
            rows[:, :, 8] = merge_id[runs]
            keys.append(rows.reshape(-1, 9))
            conj_ids.append(np.tile(conj_id[runs], n_access))
            first = np.empty((n_access, n_runs, 2), dtype=np.int64)
            first[:, :, 0] = iterations[runs]
            first[:, :, 1] = g.orders[:, None]
            firsts.append(first.reshape(-1, 2))
            join = np.full((n_access, n_runs, 2), -1, dtype=np.int64)
            if splitting:
                join[:, :, 0] = g.orders[:, None]
                join[:, :, 1] = join_iterations[runs]
            joins.append(join.reshape(-1, 2))
    instructions, (groups, members), by_field, row_instructions = _merged_instructions(
        keys, conj_ids, firsts, list(field_kinds), list(conjunction_of)
    )
    compiled = CompiledKernel(instructions, tuple(points), _joined(joins, row_instructions))
    # the grouping the estimators ask for, of the whole code, of what issues alone and of each array and kind, from
    # the tables
    offset_groups.seed(instructions, groups)
    if compiled.joined:
        alone = compiled.issues_alone
        offset_groups.seed(
            compiled.alone,
            [(key, offsets[alone[m]]) for (key, offsets), m in zip(groups, members) if alone[m].any()],
        )
    for instrs, field_groups in by_field.values():
        offset_groups.seed(instrs, field_groups)
    object.__setattr__(compiled, "_by_field", {k: instrs for k, (instrs, _) in by_field.items()})
    if in_flight:
        conjunctions = list(conjunction_of)
        object.__setattr__(
            compiled, "_in_flight", {conjunctions[c]: n for c, n in in_flight.items() if conjunctions[c]}
        )
    return compiled


def _iterations(loops, relevant: tuple[int, ...], common: tuple, blockdim: dict, block) -> np.ndarray:
    """The iterations of the loops `relevant` (positions, one row each, in the order of the loops' nesting) that
    some thread may run, as far as `common` (`_common_thread_constraints`) tells: each of its tables over the
    iterations of its own loops."""
    sizes = [len(loops[i].values) for i in relevant]
    runs = np.ones(sizes, dtype=bool)
    for used, table in common:
        positions = _product([sizes[k] for k in used])
        counters = {
            loops[relevant[k]].counter: np.asarray(loops[relevant[k]].values)[positions[:, j]]
            for j, k in enumerate(used)
        }
        values = np.moveaxis(table.values({**blockdim, **counters}, len(positions)), 0, 1)
        shape = [sizes[k] if k in used else 1 for k in range(len(sizes))]
        runs &= ~never_satisfied_each(values, block).reshape(shape)
    return np.argwhere(runs)


def _product(sizes: list[int]) -> np.ndarray:
    """Every position of loops of `sizes`, one row each (one empty row where there are none)."""
    return np.indices(sizes, dtype=np.int64).reshape(len(sizes), math.prod(sizes)).T


def _joined(joins: list, row_instructions: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """`CompiledKernel.joined` from each row's (access, iteration of the loops that do not split lanes), -1 where no
    loop splits them, and its instruction: the distinct instructions of the rows of one pair, where they are
    several, in the order of their first instruction; an instruction joins the first of them it is in."""
    if not joins:
        return ()
    join = np.concatenate(joins)
    split = join[:, 0] >= 0
    if not split.any():
        return ()
    _, pair = first_of_equal_rows(join[split])
    members: dict[int, set] = {}
    for p, instruction in zip(pair.tolist(), row_instructions[split].tolist()):
        members.setdefault(p, set()).add(instruction)
    joined, taken = [], set()
    for group in sorted((sorted(m) for m in members.values() if len(m) > 1), key=lambda m: m[0]):
        group = [i for i in group if i not in taken]
        if len(group) > 1:
            joined.append(tuple(group))
            taken.update(group)
    return tuple(joined)


def _guard_rows(guard, table, forms, merge_forms, block, conjunction_of: dict, merge_of: dict):
    """For a guard in each iteration of its loop group: whether some thread may run it, the id of its
    conjunction (in `conjunction_of`, which it extends) and the id of the guard its instruction is kept apart by
    (in `merge_of`; 0 where the model merges accesses across guards)."""
    count = forms.shape[1]
    values = np.stack([forms[table.row[t]] for t in guard], axis=1) if guard else np.zeros((count, 0, 7), np.int64)
    runs = ~never_satisfied_each(values, block)
    _hold_alike(values)
    conj_id = np.zeros(count, dtype=np.int64)
    merge_id = np.zeros(count, dtype=np.int64)
    merge_values = (
        None
        if merge_forms is None
        else (np.stack([merge_forms[table.row[t]] for t in guard], axis=1) if guard else values)
    )
    if merge_values is not None:
        _hold_alike(merge_values)
    running = np.flatnonzero(runs)
    if running.size:
        conj_id[running] = _ids_in_order(
            values[running],
            conjunction_of,
            lambda rows: tuple(tuple.__new__(Affine, (tuple(row[:-1]), row[-1])) for row in rows if any(row)),
            0,
        )
        if merge_values is not None:
            merge_id[running] = _ids_in_order(merge_values[running], merge_of, lambda rows: tuple(map(tuple, rows)), 1)
    return runs, conj_id, merge_id


def _hold_alike(values: np.ndarray) -> None:
    """Sets the offset of each constraint of `values` (..., 7) that no coordinate enters and that holds to 0: it
    holds for every thread whatever its offset, so that conjunctions that differ in such offsets only are one (a
    copy's path conditions on its loop counters), and it is no condition of the code (`_guard_rows` leaves it out
    of the conjunction)."""
    values[~values[..., :6].any(axis=-1) & (values[..., 6] >= 0), 6] = 0


def _ids_in_order(values: np.ndarray, registry: dict, key_of, first_id: int) -> np.ndarray:
    """The id in `registry` of each conjunction of `values` (iterations, constraints, 7), a new one numbered
    ``len(registry) + first_id`` in the order the iterations first meet it: each distinct conjunction is keyed
    once, though a tile's thousands of iterations repeat a handful."""
    flat = values.reshape(len(values), -1)
    if not flat.shape[1]:
        first, group = np.zeros(1, dtype=np.int64), np.zeros(len(values), dtype=np.int64)
    else:
        first, group = first_of_equal_rows(flat)
    ids = np.empty(len(first), dtype=np.int64)
    for g in np.argsort(first, kind="stable").tolist():
        ids[g] = registry.setdefault(key_of(values[first[g]].tolist()), len(registry) + first_id)
    return ids[group]


def _merged_instructions(keys, conj_ids, firsts, field_kinds, conjunctions) -> tuple:
    """Instructions from (iteration, access) rows: rows with one key (field and kind, address, guard kept
    apart by) are one instruction, active under the distinct conjunctions of its rows; instructions and their
    conjunctions in the order of their first row in the unrolled code (iteration, then access).

    Also their `offset_groups` with the instructions (positions) of each, per (field, kind) its instructions and
    their groups, and each row's instruction (its position)."""
    if not keys:
        return (), ([], []), {}, np.zeros(0, dtype=np.int64)
    key, conj, first = np.concatenate(keys), np.concatenate(conj_ids), np.concatenate(firsts)
    in_code_order = np.lexsort((first[:, 1], first[:, 0]))
    key, conj = key[in_code_order], conj[in_code_order]
    first_row, instruction = first_of_equal_rows(key)
    rank = np.empty(len(first_row), dtype=np.int64)
    rank[np.argsort(first_row)] = np.arange(len(first_row))  # instructions in the order of their first row
    row_instructions = np.empty(len(key), dtype=np.int64)
    row_instructions[in_code_order] = rank[instruction]
    _, pair_first = np.unique(instruction * len(conjunctions) + conj, return_index=True)
    pair_first = pair_first[np.lexsort((pair_first, rank[instruction[pair_first]]))]
    pair_conj = conj[pair_first]
    bounds = np.searchsorted(rank[instruction[pair_first]], np.arange(len(first_row) + 1))
    # a tile's thousands of instructions share a few coefficient vectors, fields and guards: one tuple each, and
    # the instructions built by C-level maps over them
    key = key[np.sort(first_row)]
    kinds_of, kind_index = first_of_equal_rows(key[:, :7])
    heads = [
        (*field_kinds[row[0]], tuple(row[1:7])) for row in key[kinds_of].tolist()
    ]  # (field, kind, coefficients) of each distinct head
    singles = [(c,) for c in conjunctions]
    guards = list(map(singles.__getitem__, pair_conj[bounds[:-1]].tolist()))
    several: dict[tuple, tuple] = {}
    for i in np.flatnonzero(np.diff(bounds) > 1).tolist():
        g = tuple(conjunctions[c] for c in pair_conj[bounds[i] : bounds[i + 1]].tolist())
        guards[i] = several.setdefault(g, g)
    head = list(map(heads.__getitem__, kind_index.tolist()))
    affines = map(tuple.__new__, itertools.repeat(Affine), zip(map(operator.itemgetter(2), head), key[:, 7].tolist()))
    instructions = tuple(
        map(
            tuple.__new__,
            itertools.repeat(Instruction),
            zip(map(operator.itemgetter(0), head), map(operator.itemgetter(1), head), affines, guards),
        )
    )
    # offset groups: instructions of one head and one guard (a conjunction's id, or past them a set of several's)
    guard_id = pair_conj[bounds[:-1]].copy()
    several_ids = {id(g): len(conjunctions) + k for k, g in enumerate(several.values())}
    for i in np.flatnonzero(np.diff(bounds) > 1).tolist():
        guard_id[i] = several_ids[id(guards[i])]
    group_first, group = first_of_equal_rows(np.stack([kind_index, guard_id], axis=1))
    occurrence = np.argsort(group_first)  # groups in the order of their first instruction
    number = np.empty(len(occurrence), dtype=np.int64)
    number[occurrence] = np.arange(len(occurrence))
    in_groups = np.argsort(number[group], kind="stable")
    starts = np.searchsorted(number[group][in_groups], np.arange(len(occurrence) + 1)).tolist()
    offsets = key[:, 7][in_groups]
    offsets.flags.writeable = False
    groups, group_members = [], []
    for g, first_instruction in enumerate(group_first[occurrence].tolist()):
        field_name, kind, coeffs = heads[kind_index[first_instruction]]
        groups.append(((field_name, kind, coeffs, guards[first_instruction]), offsets[starts[g] : starts[g + 1]]))
        group_members.append(in_groups[starts[g] : starts[g + 1]])
    field_kind = key[:, 0]
    by_field = {}
    for fk in np.unique(field_kind).tolist():
        members = np.flatnonzero(field_kind == fk).tolist()
        by_field[field_kinds[fk]] = (
            tuple(map(instructions.__getitem__, members)),
            [g for g in groups if (g[0][0], g[0][1]) == field_kinds[fk]],
        )
    return instructions, (groups, group_members), by_field, row_instructions


def first_of_equal_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the distinct rows of `table`: the index of each one's first occurrence, and for every row the
    number of its distinct row (what ``np.unique(axis=0)`` returns, which sorts rows as bytes, ten times
    slower)."""
    order = np.lexsort(table.T[::-1])
    ordered = table[order]
    starts = np.flatnonzero(np.concatenate(([True], (ordered[1:] != ordered[:-1]).any(axis=1))))
    is_start = np.zeros(len(table), dtype=np.int64)
    is_start[starts] = 1
    group = np.empty(len(table), dtype=np.int64)
    group[order] = np.cumsum(is_start) - 1
    return np.minimum.reduceat(order, starts), group


def never_satisfied_each(values: np.ndarray, block: tuple[int, int, int]) -> np.ndarray:
    """`never_satisfied` for conjunctions given as an array (..., constraints, 7) of coefficients and offset."""
    thread_only = ~values[..., 3:6].any(axis=-1)
    largest = values[..., 6] + np.maximum(0, values[..., :3] * (np.asarray(block) - 1)).sum(axis=-1)
    return (thread_only & (largest < 0)).any(axis=-1)


class AffineValues:
    """``coeffs . v`` at every point of a set whose coordinates are stored one contiguous array each (`columns`,
    shape (len(coeffs), ...)), once per coefficient vector: a sum over the nonzero coefficients, several times
    faster than numpy's integer matrix product. The arrays returned are shared, not to be written."""

    def __init__(self, columns: np.ndarray):
        self._columns = columns
        self._values: dict[tuple[int, ...], np.ndarray] = {}

    def __call__(self, coeffs: tuple[int, ...]) -> np.ndarray:
        if coeffs not in self._values:
            values = np.zeros(self._columns.shape[1:], dtype=np.int64)
            for column, c in zip(self._columns, coeffs):
                if c:
                    values += c * column
            values.flags.writeable = False
            self._values[coeffs] = values
        return self._values[coeffs]


class BlockThreads:
    """The threads of a few whole blocks, with each guard's mask and each coefficient vector's values computed once:
    the L1 estimate and the throughput model's request counts look at the same representative blocks of a
    candidate (`block_threads`)."""

    def __init__(self, block: tuple[int, int, int], bids: tuple[tuple[int, int, int], ...]):
        self.coords = np.stack([thread_coords(block, bid) for bid in bids])  # (blocks, threads, 6), warp order
        #: ``coeffs . v`` for every thread, shape (blocks, threads)
        self.values = AffineValues(np.ascontiguousarray(np.moveaxis(self.coords, -1, 0)))
        self._satisfying: dict[tuple[Affine, ...], np.ndarray] = {}
        self._holds: dict[Affine, np.ndarray] = {}
        #: `guards_mask` of each guard asked for
        self.guard_masks: dict[tuple, np.ndarray] = {}
        self._mask_classes: dict[tuple, int] = {}
        self._mask_ids: dict[bytes, int] = {}

    def mask_class(self, guards) -> int:
        """A number for the threads `guards` let run: equal for guards that let the same threads run."""
        number = self._mask_classes.get(guards)
        if number is None:
            content = guards_mask(guards, self).tobytes()
            number = self._mask_classes[guards] = self._mask_ids.setdefault(content, len(self._mask_ids))
        return number

    def satisfying(self, conjunction: tuple[Affine, ...]) -> np.ndarray:
        """Which threads satisfy every ``>= 0`` constraint of `conjunction`; shared, not to be written."""
        mask = self._satisfying.get(conjunction)
        if mask is None:
            if len(conjunction) == 1:
                mask = self._holding(conjunction[0])
            else:
                mask = np.ones(self.coords.shape[:-1], dtype=bool)
                for c in conjunction:
                    mask &= self._holding(c)
                mask.flags.writeable = False
            self._satisfying[conjunction] = mask
        return mask

    def _holding(self, constraint: Affine) -> np.ndarray:
        """Which threads satisfy one constraint, kept: a tile copy's hundreds of conjunctions share most of theirs."""
        mask = self._holds.get(constraint)
        if mask is None:
            mask = self._holds[constraint] = self.values(constraint.coeffs) >= -constraint.offset
            mask.flags.writeable = False
        return mask

    def updates(self, points) -> int:
        """Points the threads update: of each conjunction of `points` (a compiled kernel's, one per point of a
        thread's fold or tile), the threads that satisfy it."""
        return sum(int(self.satisfying(conj).sum()) for conj in points)


@functools.lru_cache(maxsize=4)
def block_threads(block: tuple[int, int, int], bids: tuple[tuple[int, int, int], ...]) -> BlockThreads:
    """The representative blocks of a candidate, for both of its estimators (cached)."""
    return BlockThreads(block, bids)


def guards_mask(guards, threads: BlockThreads) -> np.ndarray:
    """Which threads of `threads` some conjunction of `guards` (an instruction's) lets run; kept with `threads`
    (the L1 estimate, the request counts and the shared-memory estimate ask for a tile copy's hundreds of guards
    on the same blocks); shared, not to be written."""
    mask = threads.guard_masks.get(guards)
    if mask is None:
        mask = np.zeros(threads.coords.shape[:-1], dtype=bool)
        for conj in guards:
            mask |= threads.satisfying(conj)
        mask.flags.writeable = False
        threads.guard_masks[guards] = mask
    return mask


def active_masks(instructions, threads: BlockThreads) -> np.ndarray:
    """Which threads run each instruction, shape (instructions, blocks, threads); instructions under the same
    guards (a stencil's loads) share one evaluation of them (`guards_mask` keeps it)."""
    if not instructions:
        return np.zeros((0, *threads.coords.shape[:-1]), dtype=bool)
    return np.stack([guards_mask(i.guards, threads) for i in instructions])


def byte_addresses(instructions, fields: dict, threads: BlockThreads) -> np.ndarray:
    """Each instruction's byte address (from a 256-B boundary) for every thread, shape (instructions, blocks,
    threads); instructions whose addresses differ by a constant only (a stencil's neighbours) share one product
    of their coefficients with the coordinates."""
    if not instructions:
        return np.zeros((0, *threads.coords.shape[:-1]), dtype=np.int64)
    elements = np.stack([threads.values(i.address.coeffs) for i in instructions])
    extra = (
        np.array([i.address.offset for i in instructions], dtype=np.int64),
        np.array([fields[i.field].element_bytes for i in instructions], dtype=np.int64),
        np.array([fields[i.field].base_offset_bytes for i in instructions], dtype=np.int64),
    )
    offset, element_bytes, base = (a.reshape(-1, 1, 1) for a in extra)
    return base + element_bytes * (elements + offset)


@cached_by_identity(maxsize=64)
def offset_groups(instructions) -> list[tuple[tuple, np.ndarray]]:
    """`instructions` that differ in their offset only, grouped: ``((field, kind, coeffs, guards), offsets)``, the
    offsets in the instructions' order. A tile's thousands of instructions form a few groups; the grouping
    depends on the compiled kernel only, so it is kept for the instruction tuple."""
    groups: dict[tuple, list[int]] = {}
    for instr in instructions:
        groups.setdefault((instr.field, instr.kind, instr.address.coeffs, instr.guards), []).append(
            instr.address.offset
        )
    return [(key, np.asarray(offsets, dtype=np.int64)) for key, offsets in groups.items()]


def thread_coords(block: tuple[int, int, int], bid: tuple[int, int, int]) -> np.ndarray:
    """Coordinates (tid, bid) of every thread of one block, in warp order (x fastest)."""
    bx, by, bz = block
    tz, ty, tx = np.meshgrid(np.arange(bz), np.arange(by), np.arange(bx), indexing="ij")
    n = bx * by * bz
    coords = np.empty((n, 6), dtype=np.int64)
    coords[:, 0], coords[:, 1], coords[:, 2] = tx.ravel(), ty.ravel(), tz.ravel()
    coords[:, 3:] = bid
    return coords
