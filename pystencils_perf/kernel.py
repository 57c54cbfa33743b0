"""The IR-neutral kernel model: fields, accesses, loops, the active-point predicate.

Adapters translate a generator's kernel into a `KernelModel`; everything after
that (folding, estimation, prediction) only sees these dataclasses. Addresses are
sympy expressions in *elements* relative to the field's element 0, over the
thread symbols below and loop counters.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field, replace
from enum import Enum

import sympy as sp

from .errors import ConfigurationError, HarvestError
from .resources import ResourceUsage

AXES = ("x", "y", "z")


def _index_symbols(prefix: str) -> tuple[sp.Symbol, sp.Symbol, sp.Symbol]:
    return tuple(sp.Symbol(f"{prefix}.{a}", integer=True, nonnegative=True) for a in AXES)


#: threadIdx.x..z
TID = _index_symbols("tid")
#: blockIdx.x..z
BID = _index_symbols("bid")
#: blockDim.x..z
BDIM = _index_symbols("bdim")
THREAD_SYMBOLS = frozenset(TID + BID + BDIM)
#: the per-thread loop counters that `KernelModel.folded` adds, one per axis
FOLD_COUNTERS = _index_symbols("fold")


class AccessKind(str, Enum):
    LOAD = "load"
    STORE = "store"


#: the boundary `Field.base_offset_bytes` is measured from (DRAM/L2 granules and lines all divide it)
ALIGNMENT_BYTES = 256


def base_offset(byte_offset: int) -> int:
    """A byte offset as the model stores it: bytes past the last `ALIGNMENT_BYTES` boundary."""
    return int(byte_offset) % ALIGNMENT_BYTES


def interior_offsets(fields, first_point, where: str) -> dict[str, int]:
    """Base offsets that put `first_point` (spatial coordinates, slowest index dimensions after) on a boundary.

    Every adapter's ``align="interior"``: element ``sum(c * stride)`` of each
    field, the one the first thread updates, starts an `ALIGNMENT_BYTES` unit.
    """
    offsets = {}
    for f in fields:
        if len(f.strides) < len(first_point):
            raise HarvestError(
                f"{where}: interior alignment needs field {f.name!r} to have the "
                f"{len(first_point)} dimensions of the iteration space (use align='base')"
            )
        element = sum(c * s for c, s in zip(first_point, f.strides))
        offsets[f.name] = base_offset(f.base_offset_bytes - element * f.element_bytes)
    return offsets


def require_affine(expr, where: str) -> sp.Expr:
    """`expr`, expanded, if the estimator can evaluate it as an address or guard; else a `HarvestError`.

    Every adapter's one check: integer coefficients, and no product of two
    thread or block indices (``tid``/``bid``); blockDim and loop counters may
    multiply them, since both are numbers once a candidate is launched.
    """
    expanded, problem = _affine_check(sp.sympify(expr))
    if problem:
        raise HarvestError(f"{where}: {expanded} {problem}")
    return expanded


#: the relations a guard or a loop's condition may be: each holds where `nonnegative_form` of it is >= 0
INEQUALITIES = (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)


def nonnegative_form(relation: sp.Basic) -> sp.Expr:
    """An inequality of `INEQUALITIES` over integers as f with ``f >= 0`` where it holds (``a < b``: ``b - a - 1``)."""
    strict = isinstance(relation, (sp.StrictLessThan, sp.StrictGreaterThan))
    return relation.gts - relation.lts - (1 if strict else 0)


_COORDINATES = frozenset(TID + BID)


@functools.lru_cache(maxsize=4096)
def _affine_check(expr) -> tuple[sp.Basic, str]:
    """`expr` expanded, and what keeps it from being affine in the coordinates ("" if nothing); cached, since a
    tiled kernel's variants repeat their loads' expressions. Products are expanded first, at half the cost of
    every expansion, which only an expression with a power of a sum needs."""
    if not isinstance(expr, sp.Expr):
        return expr, "is not an integer expression"
    as_is, problem = _affine_problem(expr)  # sympy distributes a number over a sum: most addresses come expanded
    if not problem:
        return as_is, problem
    expanded, problem = _affine_problem(sp.expand_mul(expr))
    return (expanded, problem) if not problem else _affine_problem(sp.expand(expr))


def _affine_problem(expr) -> tuple[sp.Basic, str]:
    if not isinstance(expr, sp.Expr):
        return expr, "is not an integer expression"
    if not expr.free_symbols:
        return expr, "" if expr.is_Integer else "is not an integer"
    for monomial, coeff in expr.as_coefficients_dict().items():
        if not coeff.is_Integer:
            return expr, f"has the non-integer coefficient {coeff}"
        degree = 0
        for factor in sp.Mul.make_args(monomial):
            base, exponent = factor.as_base_exp()
            if not (isinstance(base, sp.Symbol) and exponent.is_Integer and exponent > 0) and factor is not sp.S.One:
                return expr, "is not affine in the thread and block indices"
            degree += int(exponent) if base in _COORDINATES else 0
        if degree > 1:
            return expr, "is not affine in the thread and block indices"
    return expr, ""


@dataclass(frozen=True)
class Field:
    """An array in device memory.

    `shape` and `strides` are in elements, in the generator's index order;
    `base_offset_bytes` is the byte offset of element 0 from a 256-B boundary.
    """

    name: str
    element_bytes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    base_offset_bytes: int = 0
    dtype: str = ""

    def __post_init__(self):
        if self.element_bytes <= 0:
            raise HarvestError(f"field {self.name!r}: element size must be positive, got {self.element_bytes}")
        if len(self.shape) != len(self.strides):
            raise HarvestError(f"field {self.name!r}: shape {self.shape} and strides {self.strides} differ in rank")


@dataclass(frozen=True)
class Access:
    """One load or store instruction of a thread.

    `predicate` is the condition under which the thread executes it (the index
    guards around it), a sympy boolean over thread symbols and loop counters.
    """

    field: str
    kind: AccessKind
    address: sp.Expr
    predicate: sp.Basic = sp.true
    #: of a load: how many of its loads a warp issues before it waits for them, where the code decides it (a loop
    #: that nvcc unrolls at run time: its unrolled groups' loads all at once, the iterations left over one by
    #: one); 0 leaves it to the performance model's estimate
    loads_in_flight: int = 0

    def __str__(self) -> str:
        return f"{self.kind.value:5s} {self.field}[{self.address}]"


@dataclass(frozen=True)
class Loop:
    """A per-thread loop with a constant trip count (thread folding, grid-stride).

    `updates` is False for a loop whose iterations are not lattice updates (a block's cooperative copy into
    shared memory, a filter's taps over the staged tile): the domain may not depend on it.

    `splits_lanes` makes its iterations classes of lanes instead of instructions: an access over it is one
    instruction per iteration of its other loops, which each lane runs at its own class's address (a loop unrolled
    at run time runs an unrolled group at another iteration in lanes whose trip counts differ). A lane is in one
    class at most: the access's guard says which.
    """

    counter: sp.Symbol
    start: int
    stop: int
    step: int = 1
    updates: bool = True
    splits_lanes: bool = False

    @property
    def values(self) -> range:
        return range(self.start, self.stop, self.step)


@dataclass(frozen=True)
class KernelModel:
    """Everything the estimator needs to know about one kernel.

    `work_items` is the number of threads per launch axis (x, y, z); `domain`
    says which (thread, loop iteration) points are active, i.e. perform one of
    the kernel's `lattice_updates`.
    """

    name: str
    fields: tuple[Field, ...]
    accesses: tuple[Access, ...]
    work_items: tuple[int, int, int]
    lattice_updates: int
    domain: sp.Basic = sp.true
    loops: tuple[Loop, ...] = ()
    flops_per_lup: float = 0.0
    fold: tuple[int, int, int] = (1, 1, 1)
    registers_per_thread: int | None = None
    shared_memory_bytes: int = 0
    #: shared memory per block that grows with the block size (a tile-plus-halo copy), an expression of
    #: ``blockDim`` in bytes on top of `shared_memory_bytes` (see `shared_memory_for`)
    block_shared_memory_bytes: sp.Basic = sp.Integer(0)
    generator: str = ""
    #: registers per thread of the generated code of each fold, ((fx, fy, fz), registers) pairs;
    #: `folded` and `registers_for` use them where known
    registers_by_fold: tuple[tuple[tuple[int, int, int], int], ...] = ()
    #: how often a thread's warp waits for its loads in the compiled code of each fold, ((fx, fy, fz), waits)
    #: pairs, where the compiler's code was read (`ResourceUsage.load_waits_per_thread`)
    load_waits_by_fold: tuple[tuple[tuple[int, int, int], float], ...] = ()
    #: the spill bytes of each fold's compiled code that spills, ((fx, fy, fz), (stored, loaded, kept)) pairs,
    #: per thread (`ResourceUsage.spill_store_bytes`, `spill_load_bytes`, `spill_footprint_bytes`)
    spills_by_fold: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...] = ()
    #: what the code compiled for one launch needs, (((bx, by, bz), (fx, fy, fz)), `ResourceUsage`) pairs:
    #: code that takes its block size as a compile-time constant (Kernel Tuner's ``block_size_x`` macros)
    #: has its own registers and spills per block; `registers_for` and `spills_for` prefer them
    resources_by_launch: tuple[tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ResourceUsage], ...] = ()
    #: a value that several iterations of the kernel's own loops load is one instruction even where
    #: their guards differ, as in pystencils' code; hand-written code with an ``if`` inside the loop is
    #: False: nvcc merges identical loads only under the same condition. Folding (`folded`) always
    #: merges: folded code loads a shared value once, before the per-point guards
    merges_accesses_across_guards: bool = True
    #: each guarded load sits under an ``if`` of its own (hand-written code that guards the loads of an
    #: unrolled loop one by one), not under the ``if`` of the point's whole body as in pystencils' code;
    #: a compiler that branches instead of predicating keeps one such load in flight at a time
    loads_guarded_one_by_one: bool = False
    #: a condition on ``blockDim`` (Kernel Tuner's ``#if``): for block sizes where it is false the code
    #: has no guard at all, every access runs and every point is active
    guards_compiled_when: sp.Basic = sp.true
    #: every thread computes all of its points, whether `domain` has them or not (tiled hand-written code whose
    #: guard skips the stores only): a block at the grid's edge runs what the others run, and its points outside
    #: the domain cost the SMs as much as updates (`launched_points_per_lup`)
    computes_outside_domain: bool = False
    #: arrays in shared memory, one per block: `Field`s of base offset 0 whose extents may be expressions of
    #: ``blockDim`` and whose strides may name `block_values` (a row padded by a rule of the block size)
    shared_arrays: tuple[Field, ...] = ()
    #: loads and stores of shared memory (`Access.field` names a shared array), over `loops` like `accesses`
    shared_accesses: tuple[Access, ...] = ()
    #: the block's shared memory is declared with its size (``__shared__ float a[N]``, a kernel's static arrays),
    #: which the compiler allocates only up to `Vendor.static_shared_memory_limit_bytes`; dynamic shared memory
    #: (``extern __shared__``) may take what the device allows a block
    shared_memory_is_static: bool = False
    #: symbols whose value the launch's block size decides, with the expression of ``blockDim`` that gives it
    #: (a shared row's pitch with padding): numbers wherever blockDim is one
    block_values: tuple[tuple[sp.Symbol, sp.Basic], ...] = ()
    #: the language of code generated for one vendor's GPUs ("CUDA" or "HIP", the runtimes of `vendors.VENDORS`),
    #: which `rank` warns about on another vendor's; "" where the code follows the device (assignments)
    language: str = ""

    def field_by_name(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise HarvestError(f"kernel {self.name!r}: access to unknown field {name!r}")

    def shared_view(self) -> KernelModel:
        """The same kernel with its shared arrays as fields and its shared accesses as accesses, which the
        estimator's address machinery compiles as it does global ones (`estimate.shared`)."""
        return replace(self, fields=self.shared_arrays, accesses=self.shared_accesses, shared_accesses=())

    @property
    def loads(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.kind is AccessKind.LOAD)

    @property
    def stores(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.kind is AccessKind.STORE)

    def loads_through_read_only_path(self) -> frozenset[str]:
        """The arrays whose loads take the read-only (non-coherent) path, which an L1 that caches no other global
        load still caches (`Device.global_loads_cached_in_l1`): those the kernel only reads, which pystencils and
        loopy pass as ``const`` restrict pointers, so that nvcc loads them through that path."""
        stored = {a.field for a in self.stores}
        return frozenset(f.name for f in self.fields if f.name not in stored)

    def block_values_for(self, block: tuple[int, int, int]) -> dict[sp.Symbol, int]:
        """The numbers of `block_values` for blocks of `block` threads (a padded shared row's pitch)."""
        values = {}
        for symbol, expr in self.block_values:
            value = sp.sympify(expr.xreplace(dict(zip(BDIM, block))))  # a lone blockDim symbol gives back the int
            if not value.is_Integer or value < 1:
                raise HarvestError(
                    f"kernel {self.name!r}: {symbol} = {expr} is not a positive integer for blockDim = {block}"
                )
            values[symbol] = int(value)
        return values

    def shared_arrays_for(self, block: tuple[int, int, int]) -> tuple[Field, ...]:
        """`shared_arrays` as the code of a block of `block` threads declares them: extents and strides in numbers.
        A description whose extent is no positive integer for that block, or whose padded rows are shorter than
        their elements, describes no code: a `HarvestError` names the array."""
        if not self.shared_arrays:
            return ()
        numbers = {s: sp.Integer(n) for s, n in [*zip(BDIM, block), *self.block_values_for(block).items()]}
        arrays = []
        for f in self.shared_arrays:
            where = f"kernel {self.name!r}: shared array {f.name!r} in blocks of {'x'.join(map(str, block))} threads"
            shape = [sp.sympify(n).xreplace(numbers) for n in f.shape]
            for axis, n in enumerate(shape):
                if not n.is_Integer or n < 1:
                    raise HarvestError(
                        f"{where}: its extent {f.shape[axis]} along axis {axis} is {n}, not a positive integer"
                    )
            shape = [int(n) for n in shape]
            strides = [int(sp.sympify(stride).xreplace(numbers)) for stride in f.strides]
            for axis in range(len(shape) - 1):
                if strides[axis] < strides[axis + 1] * shape[axis + 1]:
                    raise HarvestError(
                        f"{where}: a step of {strides[axis]} elements along axis {axis} (the pitch) is shorter than "
                        f"the {strides[axis + 1] * shape[axis + 1]} elements of axis {axis + 1}: its rows would overlap"
                    )
            arrays.append(replace(f, shape=tuple(shape), strides=tuple(strides)))
        return tuple(arrays)

    def shared_memory_for(self, block: tuple[int, int, int]) -> int:
        """Shared memory per block of `block` threads, in bytes: as described, or as the launch's own compiled code
        holds where that is more (its compiler's report, `resources_by_launch`)."""
        extra = sp.sympify(self.block_shared_memory_bytes.xreplace(dict(zip(BDIM, block))))  # a lone symbol: an int
        if not extra.is_Integer:
            raise HarvestError(
                f"kernel {self.name!r}: shared memory {self.block_shared_memory_bytes} "
                f"is not a whole number of bytes for blockDim = {tuple(block)}"
            )
        own = self.launch_resources(self.fold, block)
        return max(self.shared_memory_bytes + int(extra), own.shared_memory_bytes if own else 0)

    def registers_for(self, fold: tuple[int, int, int], block: tuple[int, int, int] | None = None) -> int | None:
        """Registers per thread when folded by `fold` and launched in blocks of `block` (compiled code if known:
        that of the launch, else of the fold, else the unfolded kernel's)."""
        if (own := self.launch_resources(fold, block)) is not None:
            return own.registers_per_thread
        return dict(self.registers_by_fold).get(tuple(fold), self.registers_per_thread)

    def launch_resources(self, fold, block) -> ResourceUsage | None:
        """The resources of the code compiled for this launch, where it was (`resources_by_launch`)."""
        if block is None or not self.resources_by_launch:
            return None
        return dict(self.resources_by_launch).get((tuple(block), tuple(fold)))

    def spills_for(self, fold, block) -> tuple[int, int, int]:
        """Bytes of spill stores and spill loads per thread of this launch's code, and the bytes it keeps spilled:
        of the code compiled for the launch where it was, else for the fold (none where neither spills)."""
        if (own := self.launch_resources(fold, block)) is not None:
            return own.spill_store_bytes, own.spill_load_bytes, own.spill_footprint_bytes
        return dict(self.spills_by_fold).get(tuple(fold), (0, 0, 0))

    def load_waits_for(self, fold, block) -> float | None:
        """How often a thread's warp waits for its outstanding loads in the code compiled for this launch, else
        for this fold; None where no compiler's code was read."""
        if (own := self.launch_resources(fold, block)) is not None:
            return own.load_waits_per_thread
        return dict(self.load_waits_by_fold).get(tuple(fold))

    def compiled_instructions_for(self, fold, block) -> float | None:
        """Instructions a thread's warp issues in the code compiled for this launch; None where its code was not
        read."""
        own = self.launch_resources(fold, block)
        return None if own is None else own.instructions_per_thread

    def compiled_shared_load_words_for(self, fold, block) -> float | None:
        """4-byte words a thread loads from shared memory in the code compiled for this launch; None where its code
        was not read."""
        own = self.launch_resources(fold, block)
        return None if own is None else own.shared_load_words_per_thread

    def launched_points_per_lup(self, block: tuple[int, int, int]) -> float:
        """The points the SMs compute per lattice update in blocks of `block`: 1, or where the kernel computes
        outside its domain (`computes_outside_domain`), the launched threads over the threads the work needs
        (the grid rounds each axis up to whole blocks)."""
        if not self.computes_outside_domain:
            return 1.0
        launched = math.prod(-(-n // b) * b for n, b in zip(self.work_items, block))
        return launched / math.prod(self.work_items)

    def with_alignment(self, offsets_bytes: dict[str, int]) -> KernelModel:
        """The same kernel with other base offsets (bytes from a 256-B boundary) per field."""
        fields = tuple(
            replace(f, base_offset_bytes=base_offset(offsets_bytes.get(f.name, f.base_offset_bytes)))
            for f in self.fields
        )
        return replace(self, fields=fields)

    def why_not_foldable(self) -> str | None:
        """None where `folded` may give each thread several points; else why the code does not allow it."""
        if self.shared_arrays:
            return (
                "a kernel with shared arrays gives its threads their points itself (a tile): folded, it would need "
                "arrays and indices its code does not declare"
            )
        return None

    def folded(self, fold: tuple[int, int, int]) -> KernelModel:
        """Thread folding: each thread updates fold[a] consecutive points along axis a.

        Modelled on the address expressions of the linear 3D mapping
        ``ctr = start + bid*bdim + tid``: substituting ``tid -> f*tid + k`` and
        ``bdim -> f*bdim`` gives ``start + f*(bid*bdim + tid) + k``, with a new
        per-thread loop over ``k`` in ``[0, f)``.
        """
        fold = tuple(int(f) for f in fold)
        if any(f < 1 for f in fold):
            raise HarvestError(f"kernel {self.name!r}: folding factors must be >= 1, got {fold}")
        if self.fold != (1, 1, 1):
            raise HarvestError(f"kernel {self.name!r} is already folded {self.fold}")
        if fold == (1, 1, 1):
            return self
        if why := self.why_not_foldable():
            raise HarvestError(f"kernel {self.name!r} cannot be folded {fold}: {why}")
        subs, loops = {}, list(self.loops)
        for a, f in enumerate(fold):
            if f == 1:
                continue
            k = FOLD_COUNTERS[a]
            subs[TID[a]] = f * TID[a] + k
            subs[BDIM[a]] = f * BDIM[a]
            loops.append(Loop(k, 0, f))
        accesses = tuple(
            replace(acc, address=sp.expand(acc.address.xreplace(subs)), predicate=acc.predicate.xreplace(subs))
            for acc in self.accesses
        )
        work_items = tuple(-(-n // f) for n, f in zip(self.work_items, fold))
        return replace(
            self,
            accesses=accesses,
            domain=self.domain.xreplace(subs),
            guards_compiled_when=self.guards_compiled_when.xreplace(subs),
            loops=tuple(loops),
            work_items=work_items,
            fold=fold,
            registers_per_thread=self.registers_for(fold),
        )

    def summary(self) -> str:
        """A human-readable description: fields, accesses, launch."""
        lines = [f"kernel {self.name} ({self.generator})"]
        lines.append(
            f"  launch: threads per axis (x, y, z) {self.work_items}, grid = ceil(threads / block) per axis"
            f"   fold: {self.fold}   flops/LUP: {self.flops_per_lup:g}"
        )
        if self.registers_per_thread is not None:
            lines.append(f"  registers/thread: {self.registers_per_thread}")
        lines.append(f"  active points: {self.domain}")
        if self.guards_compiled_when is not sp.true:
            lines.append(f"  guards compiled only where {self.guards_compiled_when}")
        if not self.merges_accesses_across_guards:
            lines.append("  a value loaded under different guards of the kernel's loops is loaded once per guard")
        if self.computes_outside_domain:
            lines.append("  every thread computes all of its points; the active points' guard skips the rest's stores")
        for f in self.fields:
            lines.append(
                f"  field {f.name}: {f.dtype or str(f.element_bytes) + ' B'} shape {f.shape} strides {f.strides}"
                f" base offset {f.base_offset_bytes} B"
            )
        for f in self.shared_arrays:
            lines.append(
                f"  shared array {f.name}: {f.dtype or str(f.element_bytes) + ' B'} shape {f.shape} strides {f.strides}"
            )
        for symbol, value in self.block_values:
            lines.append(f"  {symbol} = {value}")
        for lp in self.loops:
            kind = ("" if lp.updates else "   (no updates)") + ("   (classes of lanes)" if lp.splits_lanes else "")
            lines.append(f"  loop {lp.counter} in range({lp.start}, {lp.stop}, {lp.step}){kind}")
        n_load, n_store = len(self.loads), len(self.stores)
        lines.append(f"  accesses: {n_load} loads, {n_store} stores")
        for acc in self.accesses:
            pred = "" if acc.predicate == self.domain or acc.predicate is sp.true else f"   if {acc.predicate}"
            at_once = f"   ({acc.loads_in_flight} at once)" if acc.loads_in_flight else ""
            lines.append(f"    {acc}{pred}{at_once}")
        if self.shared_accesses:
            n_load = sum(a.kind is AccessKind.LOAD for a in self.shared_accesses)
            lines.append(f"  shared-memory accesses: {n_load} loads, {len(self.shared_accesses) - n_load} stores")
            for acc in self.shared_accesses:
                pred = "" if acc.predicate == self.domain or acc.predicate is sp.true else f"   if {acc.predicate}"
                lines.append(f"    {acc}{pred}")
        return "\n".join(lines)


def parse_domain(value) -> tuple[int, ...] | None:
    """A domain shape as the API, a SPEC and ``--domain`` give it: None, ``"64x64x64"`` or a sequence of
    one to three positive integers; an empty or negative one is refused here, not as an empty iteration space."""
    if value is None:
        return None
    if isinstance(value, str):
        values = value.lower().split("x")
        if not (1 <= len(values) <= 3 and all(v.strip().isdecimal() and int(v) > 0 for v in values)):
            raise ConfigurationError(
                f"domain {value!r} is not of the form AxBxC (one to three positive integers, e.g. 64x64x64)"
            )
        return _within_index_range(value, tuple(int(v) for v in values))
    try:
        values = tuple(value)
    except TypeError:
        values = ()
    if not 1 <= len(values) <= 3 or any(
        isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 for v in values
    ):
        raise ConfigurationError(f"domain shape {value!r} is not one to three positive integers, e.g. (64, 64, 64)")
    return _within_index_range(value, tuple(int(v) for v in values))


#: the most points along one axis: pystencils' kernels hold sizes and indices in int64_t, so no GPU index reaches
#: beyond (and pystencils overflows on it); smaller extents are judged per launch against the grid limits
#: (`vendors.GridLimits`): CUDA launches up to 2**31 - 1 blocks along x, so an axis of 2**31 points may still fit
MAX_DOMAIN_EXTENT = 2**63 - 1


def _within_index_range(value, shape: tuple[int, ...]) -> tuple[int, ...]:
    if max(shape) > MAX_DOMAIN_EXTENT:
        raise ConfigurationError(
            f"domain {value!r} has {max(shape)} points along an axis, more than the "
            f"{MAX_DOMAIN_EXTENT} (2**63 - 1) a GPU kernel's 64-bit index holds"
        )
    return shape


@dataclass(frozen=True)
class HarvestOptions:
    """How to complete what the kernel object does not say.

    :param domain_shape: array shape of variable-size fields, spatial dimensions
        only, in the field's index order (the numpy shape without index dimensions);
        anything `parse_domain` takes.
    :param align: ``"base"``: element 0 of every field lies on a 256-B boundary;
        ``"interior"``: the first interior point (the one thread (0, 0, 0) updates) does.
    :param field_strides: explicit strides in elements per field name, for
        variable-size fields whose layout the default (spatial dimensions as the
        field's layout says, index dimensions slowest) does not describe.
    :param base_offsets_bytes: explicit base offsets from a 256-B boundary per
        field name; they override `align`.
    """

    domain_shape: tuple[int, ...] | None = None
    align: str = "base"
    field_strides: dict = field(default_factory=dict)
    base_offsets_bytes: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "domain_shape", parse_domain(self.domain_shape))
        if self.align not in ("base", "interior"):
            raise ConfigurationError(f"alignment must be 'base' or 'interior', got {self.align!r}")
