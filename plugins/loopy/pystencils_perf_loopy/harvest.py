"""The translation of a loopy GPU kernel into a `KernelModel`, behind the `adapter` plugin.

A loopy kernel says everything the estimator needs once its parameters are
fixed (``lp.fix_parameters``):

- inames tagged ``g.N`` are ``blockIdx``, inames tagged ``l.N`` ``threadIdx``
  along axis N; every other iname (untagged, ``for``, ``unr``, ``ilp``) is a
  per-thread `Loop` whose constant bounds come from the iname domain;
- array shapes, strides (the fixed-stride dim tags) and offsets come from the
  kernel's global array arguments;
- the iname domain of every instruction becomes the guard of its accesses, as
  the index guard of a pystencils kernel does;
- local temporaries (``lp.add_prefetch(..., default_tag="l.auto")``'s tiles)
  are the block's shared arrays, their reads and writes shared loads and stores.

Block-size generic: loopy bakes the block (the ``l.N`` extents ``L``) into the
kernel. Where every index and domain constraint uses an axis in the split form
``c*(L*g + l)`` (what ``split_iname(..., outer_tag="g.N", inner_tag="l.N")``
produces), the model writes it ``c*(blockDim*blockIdx + threadIdx)``: the
kernel as it would be split for another block. At the kernel's own block
(`kernel_block`) the model is exactly the kernel; at other blocks it is the
same kernel re-split. An axis used through its ``l.N`` iname alone is
``threadIdx``, as every index of a local temporary is. Other index forms are
rejected with the iname named. Shared arrays, and the loops and guards of a
fetch into them, keep the kernel's own sizes: exact at `kernel_block` only.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

import sympy as sp
from pystencils_perf.errors import HarvestError
from pystencils_perf.kernel import (
    BDIM,
    BID,
    TID,
    Access,
    AccessKind,
    Field,
    KernelModel,
    Loop,
    base_offset,
    interior_offsets,
    require_affine,
)


@dataclass(frozen=True)
class _Axis:
    """One launch axis: its ``g.N`` iname, its ``l.N`` inames (the compute's, and those of fetches into local
    temporaries, which loopy tags alike) and the threads a block has along it (the largest ``l.N`` extent)."""

    index: int
    group: str | None
    local_inames: tuple[str, ...]
    local_extent: int

    @property
    def used(self) -> bool:
        return self.group is not None or bool(self.local_inames)

    @property
    def global_index(self) -> sp.Expr:
        return BDIM[self.index] * BID[self.index] + TID[self.index]


class Harvester:
    """One pass over one loop kernel."""

    def __init__(self, knl, options):
        import loopy as lp
        from loopy.preprocess import find_temporary_address_space

        # a prefetch's tile is local only once loopy decides it (its address space is auto until preprocessing)
        self.knl = find_temporary_address_space(knl)
        self.where = f"loopy kernel {knl.name!r}"
        self.options = options
        self.local_temporaries = {
            name: t for name, t in self.knl.temporary_variables.items() if t.address_space == lp.AddressSpace.LOCAL
        }
        self.fetch_inames = self._fetch_inames()
        self.symbols = {name: sp.Symbol(name, integer=True) for name in knl.all_inames()}
        self.loop_inames: list[str] = []
        self.axes = self._axes()
        self.loops = {name: self._loop(name) for name in self.loop_inames}
        self.work_items = self._work_items()

    # -- inames ---------------------------------------------------------------------
    def _axes(self) -> tuple[_Axis, _Axis, _Axis]:
        from loopy.kernel.data import (
            ForceSequentialTag,
            GroupInameTag,
            IlpBaseTag,
            InameImplementationTag,
            LocalInameTag,
            UnrollTag,
        )

        found: dict[tuple[str, int], list[str]] = {}
        for name in sorted(self.knl.all_inames()):
            tags = [t for t in self.knl.iname_tags(name) if isinstance(t, InameImplementationTag)]
            hardware = [t for t in tags if isinstance(t, (GroupInameTag, LocalInameTag))]
            other = [
                t
                for t in tags
                if not isinstance(t, (GroupInameTag, LocalInameTag, UnrollTag, IlpBaseTag, ForceSequentialTag))
            ]
            if other:
                raise HarvestError(
                    f"{self.where}: iname {name!r} is tagged {other[0]}; only g.N, l.N, unr, ilp and for can be described"
                )
            if not hardware:
                self.loop_inames.append(name)
                continue
            tag = hardware[0]
            kind = "g" if isinstance(tag, GroupInameTag) else "l"
            if tag.axis > 2:
                raise HarvestError(f"{self.where}: iname {name!r} is tagged {kind}.{tag.axis}; CUDA has axes 0..2 only")
            on_axis = found.setdefault((kind, tag.axis), [])
            own = [n for n in on_axis if kind == "g" or n not in self.fetch_inames]
            if own and (kind == "g" or name not in self.fetch_inames):
                raise HarvestError(
                    f"{self.where}: inames {own[0]!r} and {name!r} are both tagged {kind}.{tag.axis}; "
                    "the adapter needs one iname per hardware axis (besides a fetch's into a local temporary)"
                )
            on_axis.append(name)
        if not found:
            raise HarvestError(
                f"{self.where}: no iname is tagged g.N or l.N, so it is no GPU kernel "
                "(e.g. lp.split_iname(knl, 'i', 32, outer_tag='g.0', inner_tag='l.0'))"
            )
        axes = []
        for n in range(3):
            group, local_inames = found.get(("g", n), [None])[0], tuple(found.get(("l", n), ()))
            extent = max((self._range(name)[1] + 1 for name in local_inames), default=1)
            if group:
                self._range(group)  # bounds must be constant and start at 0
            axes.append(_Axis(n, group, local_inames, extent))
        return tuple(axes)

    def _fetch_inames(self) -> frozenset[str]:
        """Inames that only assignments to local temporaries run over (a prefetch's): their loops are no lattice
        updates, and they may share an ``l.N`` axis with the compute's inames."""
        import loopy as lp

        fetches: dict[str, list[bool]] = {}
        for insn in self.knl.instructions:
            if isinstance(insn, lp.Assignment):
                fetch = insn.assignee_var_names()[0] in self.local_temporaries
                for name in insn.within_inames | insn.reduction_inames():
                    fetches.setdefault(name, []).append(fetch)
        return frozenset(name for name, fetch in fetches.items() if all(fetch))

    def _domain(self, inames):
        """The iname domain (an isl basic set) of `inames` alone, with fixed parameters."""
        import islpy as isl

        dom = self.knl.get_inames_domain(frozenset(inames))
        if set(dom.get_var_names(isl.dim_type.set)) - set(inames):  # a fetch's inames in the compute's domain
            dom = dom.project_out_except(sorted(inames), [isl.dim_type.set])
        params = dom.get_var_names(isl.dim_type.param)
        if params:
            raise HarvestError(
                f"{self.where}: the domain of {sorted(inames)} depends on parameters {params}; "
                f"fix them with lp.fix_parameters(knl, {params[0]}=...)"
            )
        if dom.dim(isl.dim_type.div):
            raise HarvestError(f"{self.where}: the domain of {sorted(inames)} has integer divisions (a strided domain)")
        return dom

    def _extreme(self, dom, coefficients: dict[str, int], maximum: bool) -> int:
        import islpy as isl

        sign = 1 if maximum else -1  # min f = -max(-f)
        aff = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(dom.space))
        aff = aff.set_coefficients_by_name({k: sign * v for k, v in coefficients.items()})
        value = dom.max_val(aff)
        if not value.is_int():
            raise HarvestError(
                f"{self.where}: {coefficients} has no finite {'maximum' if maximum else 'minimum'} on {dom}"
            )
        return sign * int(value.to_python())

    def _range(self, iname: str) -> tuple[int, int]:
        """Smallest and largest value of `iname`; thread and block indices must start at 0."""
        dom = self._domain({iname})
        lo, hi = self._extreme(dom, {iname: 1}, False), self._extreme(dom, {iname: 1}, True)
        if lo != 0 and iname not in self.loop_inames:
            raise HarvestError(f"{self.where}: hardware iname {iname!r} starts at {lo}, not 0")
        return lo, hi

    def _loop(self, iname: str) -> Loop:
        lo, hi = self._range(iname)
        return Loop(sp.Symbol(f"loop.{iname}", integer=True), lo, hi + 1)

    def _work_items(self) -> tuple[int, int, int]:
        """Threads per axis: the largest global index ``L*g + l`` of its ``l.N`` inames plus one."""
        items = []
        for axis in self.axes:
            ends = [1]
            for local in axis.local_inames or ((None,) if axis.group else ()):
                coefficients = {local: 1} if local else {}
                if axis.group:
                    coefficients[axis.group] = axis.local_extent
                ends.append(self._extreme(self._domain(coefficients), coefficients, True) + 1)
            items.append(max(ends))
        return tuple(items)

    # -- expressions ----------------------------------------------------------------
    def to_sympy(self, expr, where: str) -> sp.Expr:
        """A pymbolic index expression over inames as sympy."""
        from loopy.symbolic import get_dependencies
        from pymbolic.interop.sympy import PymbolicToSympyMapper

        unknown = sorted(get_dependencies(expr) - set(self.symbols))
        if unknown:
            raise HarvestError(
                f"{where}: index {expr} depends on {unknown}, which are not inames "
                "(fix parameters with lp.fix_parameters; data-dependent indices cannot be described)"
            )
        try:
            value = PymbolicToSympyMapper()(expr)
        except (NotImplementedError, TypeError, ValueError) as err:
            raise HarvestError(f"{where}: cannot read index {expr} ({err})") from None
        return value.xreplace({sp.Symbol(name): sym for name, sym in self.symbols.items()})

    def affine(self, expr: sp.Expr, where: str, shared: bool = False) -> sp.Expr:
        """An affine expression over inames as one over thread, block and loop symbols (see module doc); `shared`:
        an index of a local temporary, which is one block's, so that no ``g.N`` iname may take part in it."""
        coefficients, constant = self._coefficients(expr, where)
        result = sp.Integer(constant)
        for axis in self.axes:
            c_group = coefficients.pop(axis.group, 0) if axis.group else 0
            used = [name for name in axis.local_inames if name in coefficients]
            c_local = sum(coefficients.pop(name) for name in used)
            local = (used or axis.local_inames or (None,))[0]
            if shared and c_group:
                raise HarvestError(
                    f"{where}: {expr} uses {axis.group!r} (g.{axis.index}), but a local temporary is one block's"
                )
            if shared or (axis.group and not c_group):  # threadIdx alone
                result += c_local * TID[axis.index]
                continue
            if axis.group and local and c_group != axis.local_extent * c_local:
                raise HarvestError(
                    f"{where}: {expr} uses {axis.group!r} (g.{axis.index}) with coefficient {c_group} and "
                    f"{local!r} (l.{axis.index}, {axis.local_extent} threads) with coefficient {c_local}; "
                    f"only c*({axis.local_extent}*{axis.group} + {local}) maps to blockDim*blockIdx + threadIdx"
                )
            result += (c_local if local else c_group) * axis.global_index
        for name, c in coefficients.items():
            if name not in self.loops:
                raise HarvestError(f"{where}: {expr} uses iname {name!r}, which the instruction is not within")
            result += c * self.loops[name].counter
        return result

    def _coefficients(self, expr: sp.Expr, where: str) -> tuple[dict[str, int], int]:
        expr = sp.expand(expr)
        gens = sorted(expr.free_symbols, key=str)
        try:
            poly = sp.Poly(expr, *gens) if gens else None
        except sp.PolynomialError:
            poly = None
        if gens and (poly is None or poly.total_degree() > 1):
            raise HarvestError(f"{where}: {expr} is not affine in the inames")
        values = {str(g): poly.coeff_monomial(g) for g in gens}
        constant = poly.coeff_monomial(1) if poly is not None else expr
        if not all(sp.sympify(v).is_Integer for v in (*values.values(), constant)):
            raise HarvestError(f"{where}: {expr} has a non-integer coefficient")
        return {k: int(v) for k, v in values.items() if v}, int(constant)

    # -- guards ---------------------------------------------------------------------
    def guard(self, inames, where: str) -> list[sp.Basic]:
        """The domain of `inames` as relations over thread, block and loop symbols.

        Bounds of a single iname are implied by the launch (``0 <= l < L``,
        ``0 <= g < G``) or by the loop's range; the axis guards
        ``blockDim*blockIdx + threadIdx < threads`` stand for them. An ``l.N``
        iname with fewer values than the block has threads (a fetch of a
        narrower tile) keeps its bound: only its first threads run it.
        """
        relations = [sp.Lt(axis.global_index, n) for axis, n in zip(self.axes, self.work_items) if axis.used]
        for axis in self.axes:
            for name in sorted(set(axis.local_inames) & set(inames)):
                threads = self._range(name)[1] + 1
                if threads < axis.local_extent:
                    relations.append(sp.Lt(TID[axis.index], threads))
        for constraint in self._domain(inames).get_constraints():
            coefficients = {k: int(v.to_python()) for k, v in constraint.get_coefficients_by_name().items()}
            constant = coefficients.pop(1, 0)
            if len(coefficients) < 2:
                continue
            expr = sum((v * self.symbols[k] for k, v in coefficients.items()), constant)
            expr = self.affine(expr, f"{where}: domain constraint {constraint}")
            if constraint.is_equality():
                relation = sp.Eq(expr, 0)
            else:
                k, rest = expr.as_coeff_Add()
                relation = sp.Lt(-rest, k + 1)
            if relation is not sp.true and relation not in relations:
                relations.append(relation)
        return relations

    def predicate(self, insn) -> list[sp.Basic]:
        """An instruction's ``if`` predicates (affine comparisons of inames)."""
        from pymbolic.primitives import Comparison

        ops = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}
        relations = []
        for pred in insn.predicates:
            where = f"{self.where}: predicate {pred} of instruction {insn.id!r}"
            if not isinstance(pred, Comparison) or pred.operator not in ops:
                raise HarvestError(f"{where} is not a comparison of affine iname expressions")
            lhs, rhs = (self.affine(self.to_sympy(e, where), where) for e in (pred.left, pred.right))
            relations.append(ops[pred.operator](lhs, rhs))
        return relations

    # -- fields ---------------------------------------------------------------------
    def field(self, name: str) -> Field:
        """A global array argument: its layout, and its offset as a base offset."""
        import loopy as lp

        arg = self.knl.arg_dict[name]
        where = f"{self.where}: array {name!r}"
        itemsize, shape, strides = self._layout(arg, where)
        if arg.offset is lp.auto or not isinstance(arg.offset, int):
            raise HarvestError(f"{where}: offset {arg.offset!r} is not a fixed number of elements")
        return Field(name, itemsize, shape, strides, base_offset(arg.offset * itemsize), str(arg.dtype.numpy_dtype))

    def shared_array(self, name: str) -> Field:
        """A local temporary as the block's shared array (strides from its dim tags: C order unless given others)."""
        temp = self.local_temporaries[name]
        itemsize, shape, strides = self._layout(temp, f"{self.where}: local temporary {name!r}")
        return Field(name, itemsize, shape, strides, 0, str(temp.dtype.numpy_dtype))

    def _layout(self, var, where: str) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        """Element size in bytes, shape and strides in elements of an array or temporary."""
        import loopy as lp
        from loopy.kernel.array import FixedStrideArrayDimTag

        if var.dtype is None or var.dtype is lp.auto:
            raise HarvestError(f"{where} has no dtype; give it one (lp.add_dtypes)")
        if var.shape is None or var.shape is lp.auto:
            raise HarvestError(f"{where} has no shape")
        shape = tuple(self._integer(s, f"{where}: shape") for s in var.shape)
        tags = var.dim_tags or ()
        if len(tags) != len(shape) or not all(isinstance(t, FixedStrideArrayDimTag) for t in tags):
            raise HarvestError(f"{where}: dim tags {tags} are not one fixed stride per axis")
        strides = tuple(self._integer(t.stride, f"{where}: stride") for t in tags)
        return var.dtype.numpy_dtype.itemsize, shape, strides

    def _integer(self, value, where: str) -> int:
        if not isinstance(value, int):
            raise HarvestError(f"{where} {value} is not a number; fix its parameters with lp.fix_parameters")
        return int(value)

    # -- the kernel -----------------------------------------------------------------
    def harvest(self) -> KernelModel:
        import loopy as lp

        if self.options.domain_shape is not None or self.options.field_strides:
            raise HarvestError(f"{self.where}: sizes and strides come from the kernel; fix them with lp.fix_parameters")
        arrays = {
            a.name for a in self.knl.args if isinstance(a, lp.ArrayArg) and a.address_space == lp.AddressSpace.GLOBAL
        }
        self.accesses: list[Access] = []
        self.shared_accesses: list[Access] = []
        self.shared_arrays = {name: self.shared_array(name) for name in self.local_temporaries}
        self.stores: list[tuple[frozenset, tuple]] = []  # (inames, index) of every global store
        self.loops_used: set[str] = set()
        flops = Counter()
        for insn in self.knl.instructions:
            if isinstance(insn, (lp.BarrierInstruction, lp.NoOpInstruction)):
                continue
            if not isinstance(insn, lp.Assignment):
                raise HarvestError(
                    f"{self.where}: instruction {insn.id!r} is a {type(insn).__name__}; only assignments can be described"
                )
            self._instruction(insn, arrays)
            if _is_float(self.knl, insn):
                _count_flops(insn.expression, insn.within_inames, flops)
        if not self.stores:
            raise HarvestError(f"{self.where} stores to no global array")
        guards = [a.predicate for a in self.accesses if a.kind is AccessKind.STORE]
        updates = self._update_loops()
        # the store's threads over the loops whose iterations are updates: what the estimator counts as updates
        points = self._count({n for n in self.stores[0][0] if n not in self.loops} | updates)
        model = KernelModel(
            name=self.knl.name,
            fields=tuple(self.field(name) for name in dict.fromkeys(a.field for a in self.accesses)),
            accesses=tuple(self.accesses),
            work_items=self.work_items,
            lattice_updates=points,
            domain=guards[0] if all(g == guards[0] for g in guards) else sp.true,
            loops=tuple(replace(self.loops[n], updates=n in updates) for n in self.loop_inames if n in self.loops_used),
            flops_per_lup=sum(n * self._count(inames) for inames, n in flops.items()) / max(points, 1),
            shared_memory_bytes=self._shared_memory_bytes(),
            shared_arrays=tuple(self.shared_arrays.values()),
            shared_accesses=tuple(self.shared_accesses),
            shared_memory_is_static=bool(self.local_temporaries),  # loopy declares local temporaries with their size
            generator=f"loopy {lp.version.VERSION_TEXT}",
        )
        return model.with_alignment(self._base_offsets(model))

    def _instruction(self, insn, arrays: set[str]) -> None:
        """Record the global and shared accesses of one assignment, guarded by its domain and predicates."""
        inames = insn.within_inames | insn.reduction_inames()
        where = f"{self.where}: instruction {insn.id!r}"
        missing = [
            (*a.local_inames, a.group)[0]
            for a in self.axes
            if a.used and not {a.group, *a.local_inames} & insn.within_inames
        ]
        if missing:
            raise HarvestError(f"{where} is not within hardware iname {missing[0]!r}; every thread would run it")
        predicate = sp.And(*self.guard(inames, where), *self.predicate(insn))
        subscripts = _subscripts(insn, arrays | set(self.shared_arrays))
        if subscripts:
            self.loops_used |= inames & set(self.loops)
        for kind, sub in subscripts:
            name = sub.aggregate.name
            shared = name in self.shared_arrays
            what = "local temporary" if shared else "array"
            here = f"{self.where}: {kind.value} of {what} {name!r} in instruction {insn.id!r}"
            index = sub.index if isinstance(sub.index, tuple) else (sub.index,)
            field = self.shared_arrays[name] if shared else self.field(name)
            access = Access(name, kind, self._address(field, index, here, shared), predicate)
            recorded = self.shared_accesses if shared else self.accesses
            if access not in recorded:
                recorded.append(access)
            if kind is AccessKind.STORE and not shared:
                self.stores.append((inames, index))

    def _address(self, field: Field, index: tuple, where: str, shared: bool = False) -> sp.Expr:
        if len(index) != len(field.shape):
            raise HarvestError(f"{where}: {len(index)} indices for {len(field.shape)} dimensions")
        address = sum(
            self.affine(self.to_sympy(i, where), f"{where}, index {i}", shared) * s
            for i, s in zip(index, field.strides)
        )
        return require_affine(address, f"{where}: address")

    def _update_loops(self) -> set[str]:
        """The loops whose iterations are lattice updates (`Loop.updates`): all but those only shared memory needs,
        a fetch's (`fetch_inames`) and those only shared accesses depend on (the compute's loop over a staged tile)."""

        def symbols(accesses: list[Access]) -> set[sp.Symbol]:
            return set().union(*(a.address.free_symbols | a.predicate.free_symbols for a in accesses))

        only_shared = symbols(self.shared_accesses) - symbols(self.accesses)
        return {n for n in self.loops_used if n not in self.fetch_inames and self.loops[n].counter not in only_shared}

    def _count(self, inames) -> int:
        import islpy as isl

        return int(isl.Set.from_basic_set(self._domain(inames)).count_val().to_python())

    def _shared_memory_bytes(self) -> int:
        return sum(math.prod(t.shape) * t.dtype.numpy_dtype.itemsize for t in self.local_temporaries.values())

    def _base_offsets(self, model: KernelModel) -> dict[str, int]:
        offsets = {f.name: f.base_offset_bytes for f in model.fields}
        if self.options.align == "interior":
            offsets = interior_offsets(model.fields, self._first_point(model), self.where)
        for name, off in self.options.base_offsets_bytes.items():
            if name not in offsets:
                raise HarvestError(f"{self.where} has no array {name!r} to give a base offset")
            offsets[name] = int(off)
        return offsets

    def _first_point(self, model: KernelModel) -> tuple[int, ...]:
        """Index of the element the first store of thread (0,0,0), block (0,0,0) writes."""
        zero = {s: 0 for s in TID + BID} | {s: 1 for s in BDIM} | {loop.counter: loop.start for loop in model.loops}
        where = f"{self.where}: interior alignment"
        return tuple(int(self.affine(self.to_sympy(i, where), where).xreplace(zero)) for i in self.stores[0][1])


def _subscripts(insn, arrays: set[str]):
    """(kind, subscript) of every access to one of `arrays` in an assignment."""
    from loopy.symbolic import WalkMapper
    from pymbolic.primitives import Subscript, Variable

    class Collect(WalkMapper):
        def __init__(self):
            super().__init__()
            self.found = []

        def map_subscript(self, expr, *args, **kwargs):
            if isinstance(expr.aggregate, Variable) and expr.aggregate.name in arrays:
                self.found.append(expr)
            self.rec(expr.index, *args, **kwargs)

    loads = Collect()
    loads(insn.expression)
    assignee = insn.assignee
    out = []
    if (
        isinstance(assignee, Subscript)
        and isinstance(assignee.aggregate, Variable)
        and assignee.aggregate.name in arrays
    ):
        out.append((AccessKind.STORE, assignee))
        loads(assignee.index)
    for pred in insn.predicates:
        loads(pred)
    return [(AccessKind.LOAD, s) for s in loads.found] + out


def _is_float(knl, insn) -> bool:
    name = insn.assignee_var_names()[0]
    var = knl.arg_dict.get(name) or knl.temporary_variables.get(name)
    dtype = getattr(var, "dtype", None)
    return dtype is not None and getattr(dtype, "numpy_dtype", None) is not None and dtype.numpy_dtype.kind in "fc"


def _count_flops(expr, inames: frozenset, out: Counter) -> None:
    """Add the floating-point operations of `expr`, per point of the inames they run in, to `out`.

    Sums and products of n terms count n - 1, quotients and powers 1, a
    reduction one operation per iteration; indices and calls count nothing.
    """
    from loopy.symbolic import Reduction
    from pymbolic import primitives as p

    if isinstance(expr, Reduction):
        inner = inames | frozenset(expr.inames)
        out[inner] += 1
        _count_flops(expr.expr, inner, out)
    elif isinstance(expr, (p.Sum, p.Product)):
        out[inames] += len(expr.children) - 1
        for child in expr.children:
            _count_flops(child, inames, out)
    elif isinstance(expr, p.Quotient):
        out[inames] += 1
        _count_flops(expr.numerator, inames, out)
        _count_flops(expr.denominator, inames, out)
    elif isinstance(expr, p.Power):
        out[inames] += 1
        _count_flops(expr.base, inames, out)
    elif isinstance(expr, p.Call):
        for child in expr.parameters:
            _count_flops(child, inames, out)
