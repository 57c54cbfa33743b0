"""Harvesting pystencils 2.x GPU kernels (and lbmpy's, which are pystencils kernels).

A lowered `GpuKernel` becomes a `KernelModel` by walking its backend AST once (`_Harvester`): every memory
access with its offset over ``threadIdx``, ``blockIdx``, ``blockDim`` and loop counters, the guards that
decide which accesses run, and the fields' sizes and strides. Applying a chosen launch is `apply`;
generating folded code is `folding`.
"""

from __future__ import annotations

import math
from dataclasses import replace

import sympy as sp

from ...errors import HarvestError
from ...kernel import (
    BDIM,
    BID,
    THREAD_SYMBOLS,
    TID,
    Access,
    AccessKind,
    Field,
    HarvestOptions,
    KernelModel,
    Loop,
    interior_offsets,
    require_affine,
)
from .apply import ApplyOptions, is_assignments
from .compat import counter_name
from .expressions import ps_to_sympy
from .folding import FoldedLaunchConfiguration, create_folded_kernel
from .targets import target_name


def _pystencils():
    try:
        import pystencils
    except ImportError:  # pragma: no cover - pystencils is a dependency
        return None
    return pystencils


def perf_harvest(kernel, options):
    ps = _pystencils()
    if ps is None:
        return None
    from pystencils.codegen.kernel import GpuKernel, Kernel

    generated = isinstance(kernel, Kernel)  # its language is fixed; assignments are generated for each device
    if is_assignments(kernel):
        kernel = create_folded_kernel(kernel)
    elif isinstance(kernel, ApplyOptions):  # a recipe: assignments and their configuration
        kernel = create_folded_kernel(kernel.assignments, kernel.config)
    if not isinstance(kernel, Kernel):
        return None
    if not isinstance(kernel, GpuKernel):
        raise HarvestError(
            f"kernel {kernel.name!r} was generated for {target_name(kernel.target)}, not a GPU; "
            "create it with CreateKernelConfig(target=Target.CUDA), or Target.HIP for an AMD GPU"
        )
    model = _Harvester(kernel, options).harvest()
    return replace(model, language=target_name(kernel.target).removeprefix("Target.")) if generated else model


class _Harvester:
    """One walk over one kernel's AST.

    - declarations of integer symbols are kept as sympy expressions, so that the
      offset of every memory access can be expressed over ``threadIdx``,
      ``blockIdx``, ``blockDim`` and loop counters;
    - every ``PsMemAcc`` on the right-hand side is a load, on the left a store;
    - the conditions of ``if`` statements (the index guard) and of ternaries on
      indices (the guarded shared loads of folded code) become the predicate of
      the accesses inside them, not accesses;
    - field sizes and strides come from the fields (fixed size) or from the user's
      domain shape (variable size);
    - a kernel generated with thread folding (`folding`) says its fold
      and its lattice points through its launch configuration.
    """

    def __init__(self, kernel, options: HarvestOptions):
        from pystencils.backend.ast import expressions as ex
        from pystencils.backend.ast import structural as st

        self.ex, self.st = ex, st
        self.kernel = kernel
        self.options = options
        self.params = {p.name: p for p in kernel.parameters}
        self.fields: dict[str, Field] = {}
        self.pointers: dict[str, str] = {}  # pointer symbol name -> field name
        self.scalars: dict[str, sp.Expr] = {}  # kernel parameter name -> value (sizes, strides)
        self._describe_fields()
        self.decls: dict[str, object] = {}  # declared symbol name -> PsExpression
        self.memo: dict[str, sp.Expr] = {}
        self.counters: dict[str, sp.Symbol] = {}
        self.accesses: list[Access] = []
        self.loops: list[Loop] = []
        self.guards: list[sp.Basic] = []

    # -- fields ------------------------------------------------------------------------
    def _describe_fields(self):
        from pystencils.codegen.properties import FieldBasePtr, FieldShape, FieldStride

        domain = self.options.domain_shape
        for p in self.kernel.parameters:
            for prop in p.get_properties(FieldBasePtr):
                f = prop.field
                shape, strides = self._shape_and_strides(f, domain)
                self.pointers[p.name] = f.name
                self.fields[f.name] = Field(
                    name=f.name,
                    element_bytes=int(f.dtype.itemsize),
                    shape=shape,
                    strides=strides,
                    dtype=str(f.dtype),
                )
        for p in self.kernel.parameters:
            for prop in p.get_properties(FieldShape) | p.get_properties(FieldStride):
                fld = self.fields.get(prop.field.name)
                if fld is not None:
                    values = fld.shape if isinstance(prop, FieldShape) else fld.strides
                    self.scalars[p.name] = sp.Integer(values[prop.coordinate])

    def _shape_and_strides(self, f, domain):
        if f.has_fixed_shape:
            spatial = tuple(int(s) for s in f.spatial_shape)
            if domain is not None and tuple(domain) != spatial:
                raise HarvestError(
                    f"field {f.name!r} has the fixed shape {spatial}: the domain shape {tuple(domain)} "
                    "does not apply to it (leave it out, or create the field with variable size)"
                )
            return tuple(int(s) for s in f.shape), tuple(int(s) for s in f.strides)
        if domain is None:
            raise HarvestError(
                f"field {f.name!r} has variable size: pass the domain shape "
                f"(e.g. domain_shape=(64, 64, 64) or --domain 64x64x64) or create it with a fixed size"
            )
        if len(domain) != f.spatial_dimensions:
            raise HarvestError(
                f"field {f.name!r} has {f.spatial_dimensions} spatial dimensions, "
                f"but the domain shape {tuple(domain)} has {len(domain)}"
            )
        shape = tuple(int(n) for n in domain) + tuple(int(n) for n in f.index_shape)
        if f.name in self.options.field_strides:
            strides = tuple(int(s) for s in self.options.field_strides[f.name])
            if len(strides) != len(shape):
                raise HarvestError(f"field {f.name!r}: {len(strides)} strides given for {len(shape)} dimensions")
            return shape, strides
        # spatial coordinates as the field's layout orders them (slowest first), index dimensions slowest
        order = [f.spatial_dimensions + i for i in range(f.index_dimensions)] + list(f.layout)
        strides = [0] * len(shape)
        step = 1
        for coord in reversed(order):
            strides[coord] = step
            step *= shape[coord]
        return shape, tuple(strides)

    # -- expressions ---------------------------------------------------------------------
    def to_sympy(self, node, where: str) -> sp.Expr:
        """An integer PsExpression as a sympy expression over thread symbols and counters."""
        return ps_to_sympy(node, self._symbol, where, self._describe)

    def _symbol(self, name: str, where: str) -> sp.Expr:
        if name in self.memo:
            return self.memo[name]
        if name in self.counters:
            return self.counters[name]
        if name in self.scalars:
            return self.scalars[name]
        if name in self.decls:
            value = self.to_sympy(self.decls[name], where)
            self.memo[name] = value
            return value
        if name in self.pointers:
            raise HarvestError(f"{where}: field pointer {name} used as a number")
        raise HarvestError(
            f"{where}: the address depends on {name!r}, which is neither a thread index, a loop counter, "
            "nor a field size or stride (a kernel parameter must be fixed at generation time)"
        )

    def _describe(self, memacc) -> str:
        ptr = memacc.pointer
        name = ptr.symbol.name if isinstance(ptr, self.ex.PsSymbolExpr) else type(ptr).__name__
        return f"field {self.pointers.get(name, name)!r}"

    def _field_of(self, memacc) -> str:
        ptr = memacc.pointer
        if isinstance(ptr, self.ex.PsSymbolExpr) and ptr.symbol.name in self.pointers:
            return self.pointers[ptr.symbol.name]
        raise HarvestError(f"kernel {self.kernel.name!r}: memory access through {ptr} that is not a field pointer")

    # -- statements ----------------------------------------------------------------------
    def harvest(self) -> KernelModel:
        self.visit(self.kernel.body)
        work_items = self._work_items()
        domain = self._domain()
        model = KernelModel(
            name=self.kernel.name,
            fields=tuple(self.fields.values()),
            accesses=tuple(self.accesses),
            work_items=work_items,
            lattice_updates=math.prod(self._work_items(points=True)),
            fold=self._fold(),
            domain=domain,
            loops=tuple(self.loops),
            flops_per_lup=self._flops(),
            generator=f"pystencils {_pystencils().__version__}",
        )
        offsets = self._base_offsets(model)
        return model.with_alignment(offsets)

    def visit(self, node):
        st, ex = self.st, self.ex
        match node:
            case st.PsBlock():
                for stmt in node.statements:
                    self.visit(stmt)
            case st.PsDeclaration():
                name = node.declared_symbol.name
                self.decls[name] = node.rhs
                self._loads_in(node.rhs, f"declaration of {name}")
            case st.PsAssignment():
                lhs = node.lhs
                if isinstance(lhs, ex.PsMemAcc):
                    fname = self._field_of(lhs)
                    self._loads_in(lhs.offset, f"address of a store to {fname!r}")
                    self._record(fname, AccessKind.STORE, lhs.offset)
                self._loads_in(node.rhs, "assignment")
            case st.PsConditional():
                cond = self.to_sympy(node.condition, f"kernel {self.kernel.name!r}: guard {node.condition}")
                self._under(cond, self.visit, node.branch_true)
                if node.branch_false is not None:
                    self._under(sp.Not(cond), self.visit, node.branch_false)
            case st.PsLoop():
                self._loop(node)
            case st.PsStatement():
                self._loads_in(node.expression, "statement")
            case _:
                pass  # comments, pragmas

    def _loop(self, node):
        name = node.counter.symbol.name
        where = f"kernel {self.kernel.name!r}: loop over {name}"
        bounds = [self.to_sympy(e, where) for e in (node.start, node.stop, node.step)]
        if not all(b.is_Integer for b in bounds):
            raise HarvestError(f"{where}: bounds {bounds} must be constant at generation time")
        counter = sp.Symbol(f"loop.{name}", integer=True)
        self.loops.append(Loop(counter, *(int(b) for b in bounds)))
        self.counters[name] = counter
        self.visit(node.body)

    def _under(self, cond: sp.Basic, visit, node, *args):
        """Visit `node` with `cond` as one more guard."""
        self.guards.append(cond)
        visit(node, *args)
        self.guards.pop()

    def _loads_in(self, expr, where):
        """Record the loads in an expression tree.

        The branches of a ternary whose condition is on indices (a guarded load of a
        folded kernel) are guarded by it; a data-dependent condition guards nothing.
        """
        ex = self.ex
        if isinstance(expr, ex.PsMemAcc):
            fname = self._field_of(expr)
            self._loads_in(expr.offset, f"address of a load from {fname!r}")
            self._record(fname, AccessKind.LOAD, expr.offset)
            return
        if isinstance(expr, ex.PsTernary):
            cond = self._index_condition(expr.condition)
            if cond is not None:
                self._under(cond, self._loads_in, expr.case_then, where)
                self._under(sp.Not(cond), self._loads_in, expr.case_else, where)
                return
        for child in expr.children:
            self._loads_in(child, where)

    def _index_condition(self, node) -> sp.Basic | None:
        """`node` as a predicate over thread indices and counters, or None if it depends on data."""
        from pystencils.backend.ast.iteration import dfs_preorder

        if any(isinstance(n, self.ex.PsMemAcc) for n in dfs_preorder(node)):
            return None
        try:
            return self.to_sympy(node, f"kernel {self.kernel.name!r}: condition {node}")
        except HarvestError:
            return None

    def _record(self, fname: str, kind: AccessKind, offset_node):
        where = f"kernel {self.kernel.name!r}: {kind.value} of field {fname!r}"
        address = sp.expand(self.to_sympy(offset_node, where))
        free = address.free_symbols - THREAD_SYMBOLS - set(self.counters.values())
        if free:
            raise HarvestError(f"{where}: address {address} depends on {sorted(map(str, free))}")
        address = require_affine(address, f"{where}: address")
        predicate = sp.to_dnf(sp.And(*self.guards)) if self.guards else sp.true
        # one access per conjunction: a load shared by folded points runs if any of them is active
        for conjunction in predicate.args if isinstance(predicate, sp.Or) else (predicate,):
            access = Access(fname, kind, address, conjunction)
            if kind is AccessKind.LOAD and access in self.accesses:
                continue  # one thread loading one address twice counts once
            self.accesses.append(access)

    def _flops(self) -> float:
        """Floating-point operations per thread from pystencils' own counter on the lowered AST."""
        from pystencils.backend.ast.analysis import OperationCounter

        counts = OperationCounter()(self.kernel.body)
        per_thread = counts.float_adds + counts.float_muls + counts.float_divs
        return float(per_thread) / math.prod(self._fold())

    def _fold(self) -> tuple[int, int, int]:

        lc = self.kernel.get_launch_configuration()
        return lc.fold if isinstance(lc, FoldedLaunchConfiguration) else (1, 1, 1)

    # -- launch ---------------------------------------------------------------------------
    def _work_items(self, points: bool = False) -> tuple[int, int, int]:
        """Threads per launch axis, or with `points` the lattice points (more than threads if folded)."""

        lc = self.kernel.get_launch_configuration()
        items = getattr(lc, "num_work_items", None)
        if points and isinstance(lc, FoldedLaunchConfiguration):
            items = lc.num_points
        if items is None:
            raise HarvestError(
                f"kernel {self.kernel.name!r}: launch configuration {type(lc).__name__} has no iteration space; "
                "use the default Linear3D GPU indexing scheme"
            )
        kwargs = {}
        for p in lc.parameters:
            if p.name not in self.scalars:
                raise HarvestError(f"kernel {self.kernel.name!r}: launch size depends on parameter {p.name!r}")
            kwargs[p.name] = int(self.scalars[p.name])
        return tuple(int(w(**kwargs)) for w in items)

    def _domain(self) -> sp.Basic:
        """The guards common to every store: which threads are active (point 0 of a folded thread)."""
        stores = [a.predicate for a in self.accesses if a.kind is AccessKind.STORE]
        if not stores:
            return sp.true
        conjuncts = [set(p.args) if isinstance(p, sp.And) else {p} - {sp.true} for p in stores]
        return sp.And(*set.intersection(*conjuncts))

    def _base_offsets(self, model: KernelModel) -> dict[str, int]:
        if self.options.align == "interior":  # spatial coordinates come first, index dimensions last
            offsets = interior_offsets(model.fields, self._first_interior_point(), f"kernel {self.kernel.name!r}")
        else:
            offsets = {f.name: 0 for f in model.fields}
        for name, off in self.options.base_offsets_bytes.items():
            if name not in offsets:
                raise HarvestError(f"kernel {self.kernel.name!r} has no field {name!r} to give a base offset")
            offsets[name] = int(off)
        return offsets

    def _first_interior_point(self) -> tuple[int, ...]:
        """Spatial coordinates of the point thread (0,0,0) of block (0,0,0) updates."""
        zero = {s: 0 for s in TID + BID} | {s: 1 for s in BDIM}
        coords = []
        i = 0
        while counter_name(i) in self.decls:
            coords.append(int(self._symbol(counter_name(i), "interior alignment").xreplace(zero)))
            i += 1
        if not coords:
            raise HarvestError(
                f"kernel {self.kernel.name!r}: cannot find its iteration counters for interior alignment; use align='base'"
            )
        return tuple(coords)
