"""Thread folding as code generation for pystencils 2.x GPU kernels.

With fold ``(fx, fy, fz)`` every thread updates ``fx * fy * fz`` consecutive
points: ``ctr = start + step * f * (blockIdx * blockDim + threadIdx) + step * k``
with ``k`` in ``[0, f)`` per axis, the launch grid covers ``ceil(points / f)``
threads per axis, and a point beyond the iteration space is skipped by its own
guard, where it can be beyond (`FoldingAxes._point_guard`). A value that several
points of a thread load is loaded once (`FoldingAxes._fold_cube`). Nothing is
patched: `compat.driver_with` gives pystencils' own kernel creation driver
another axes factory (`FoldingAxes`) and its GPU indexing (`FoldedIndexing`).
"""

from __future__ import annotations

import itertools
from functools import reduce

import sympy as sp
from pystencils.backend.ast.axes import PsAxesCube, PsAxisRange
from pystencils.backend.ast.expressions import (
    PsAnd,
    PsBufferAcc,
    PsExpression,
    PsIntDiv,
    PsLt,
    PsOr,
    PsSymbolExpr,
    PsTernary,
)
from pystencils.backend.ast.structural import PsAssignment, PsBlock, PsConditional, PsDeclaration, PsLoop
from pystencils.backend.constants import PsConstant
from pystencils.backend.kernelcreation import AstFactory, FullIterationSpace
from pystencils.backend.transformations import CanonicalizeSymbols, TypifyAndFold
from pystencils.backend.transformations.axis_expansion import AxisExpansion, ExpansionFunc
from pystencils.backend.transformations.canonical_clone import CanonicalClone
from pystencils.backend.transformations.rewrite import substitute_symbols
from pystencils.codegen import GpuKernel
from pystencils.codegen.config import GpuIndexingScheme, GpuOptions
from pystencils.codegen.driver import DefaultKernelCreationDriver, KernelFactory
from pystencils.codegen.gpu_indexing import DynamicBlockSizeLaunchConfiguration, GpuIndexing

from ...errors import ConfigurationError, HarvestError
from ...kernel import AXES
from .compat import driver_with
from .expressions import ps_to_sympy
from .targets import gpu_config, target_name

NO_FOLD = (1, 1, 1)


class FoldedLaunchConfiguration(DynamicBlockSizeLaunchConfiguration):
    """pystencils' dynamic launch configuration over the folded work.

    `num_work_items` are threads per axis, ``ceil(points / fold)``; `num_points`
    are the lattice points per axis, as lambdas of the kernel parameters.
    """

    def __init__(self, num_work_items, num_points, fold, hw_props, assume_warp_aligned_block_size, default_block_size):
        super().__init__(num_work_items, hw_props, assume_warp_aligned_block_size, default_block_size)
        self._num_points = num_points
        self._fold = fold

    @property
    def num_points(self):
        return self._num_points

    @property
    def fold(self) -> tuple[int, int, int]:
        return self._fold


class FoldedIndexing:
    """Launch configurations of a folded kernel (pystencils' ``ProvidesLaunchConfigFactory``)."""

    def __init__(self, ctx, cfg, fold: tuple[int, int, int]):
        self._ctx = ctx
        self._cfg = cfg
        self._fold = fold
        self._factory = AstFactory(ctx)

    def get_launch_config_factory(self):
        ispace = self._ctx.get_iteration_space()
        dims = ispace.dimensions_in_loop_order()[::-1]  # fastest first: x, y, z
        idx = self._factory.parse_index
        points = [ispace.actual_iterations(d) for d in dims] + [idx(1) for _ in range(3 - len(dims))]
        work = [idx(PsIntDiv(p.clone() + idx(f - 1), idx(f))) for p, f in zip(points, self._fold)]
        kf = KernelFactory(self._ctx)
        work_lambdas = tuple(kf.create_lambda(w) for w in work)
        point_lambdas = tuple(kf.create_lambda(idx(p)) for p in points)
        target = self._cfg.get_target()
        warp = self._cfg.gpu.get_option("warp_size") or GpuOptions.default_warp_size(target)
        hw_props = GpuIndexing.get_hardware_properties(target, warp)
        aligned = self._cfg.gpu.get_option("assume_warp_aligned_block_size")
        block = self._cfg.gpu.get_option("default_block_size") or GpuOptions.get_default_block_size(len(dims))
        fold = self._fold

        def factory():
            return FoldedLaunchConfiguration(work_lambdas, point_lambdas, fold, hw_props, aligned, block)

        return factory


class FoldingAxes:
    """Fold the iteration cube, then map it onto blocks x threads with `AxisExpansion`, as the Linear3D scheme
    does (pystencils' ``AxesFactory``)."""

    def __init__(self, ctx, fold: tuple[int, int, int]):
        self._ctx = ctx
        self._fold = fold
        self._factory = AstFactory(ctx)
        self._type_fold = TypifyAndFold(ctx)
        self._clone = CanonicalClone(ctx)

    def create_axes(self, body: PsBlock, ispace) -> PsBlock:
        if not isinstance(ispace, FullIterationSpace):
            raise ConfigurationError("thread folding needs a dense iteration space, not an index field")
        if self._ctx.reduction_data:
            raise ConfigurationError("thread folding of kernels with reductions is not supported")
        if ispace.rank > 3 or any(f > 1 for f in self._fold[ispace.rank :]):
            raise ConfigurationError(f"fold {self._fold} folds an axis the {ispace.rank}D kernel does not have")
        cube = CanonicalizeSymbols(self._ctx, True)(self._factory.cube_from_ispace(ispace, body))
        gpu_dims = list(AXES[: ispace.rank])[::-1]  # of the cube's ranges, slowest first
        ae = AxisExpansion(self._ctx)
        fold = ExpansionFunc(f"fold{self._fold}", lambda c: self._fold_cube(c, gpu_dims))
        return ae.create_strategy([fold] + [ae.gpu_block_x_thread(d) for d in gpu_dims])(cube)

    def _fold_cube(self, cube: PsAxesCube, gpu_dims: list[str]) -> PsAxesCube:
        """One cube whose ranges step over folds, its body the unrolled points with shared loads.

        Every distinct load is declared before the first point that needs it, guarded by the points that need
        it (a load only skipped points need is not executed). Loads are hoisted here, where buffer accesses
        still carry one index per dimension, before lowering to C."""
        folds = [self._fold[AXES.index(d)] for d in gpu_dims]
        points = list(itertools.product(*(range(f) for f in folds)))
        guarded_axes = [not _fold_divides(r, f) for r, f in zip(cube.ranges, folds)]
        bodies = {k: self._point_body(cube, k) for k in points[1:]}
        bodies[points[0]] = cube.body
        hoisted: dict[tuple, tuple] = {}  # load key -> (symbol, access, points that load it), first user first
        for k in points:
            self._hoist_loads(bodies[k], k, hoisted)
        statements = []
        for k in points:  # each load declared right before the first point that needs it: shorter live ranges
            statements += [
                self._type_fold(
                    PsDeclaration(PsSymbolExpr(symbol), self._guarded_load(cube, guarded_axes, access, users))
                )
                for symbol, access, users in hoisted.values()
                if min(users) == k
            ]
            guard = self._point_guard(cube, guarded_axes, k)
            statements += bodies[k].statements if guard is None else [PsConditional(guard, bodies[k])]
        ranges = [
            PsAxisRange(r.counter, r.start, r.stop, self._type_fold(r.step.clone() * self._factory.parse_index(f)))
            for r, f in zip(cube.ranges, folds)
        ]
        return PsAxesCube(ranges, PsBlock(statements))

    def _shifted(self, rng: PsAxisRange, k: int) -> PsExpression:
        """The counter of point `k` along one range."""
        counter = PsSymbolExpr(rng.counter.symbol)
        return self._type_fold(counter + rng.step.clone() * self._factory.parse_index(k)) if k else counter

    def _point_body(self, cube: PsAxesCube, k: tuple[int, ...]) -> PsBlock:
        body = self._clone(cube.body)
        subs = {r.counter.symbol: self._shifted(r, kk) for r, kk in zip(cube.ranges, k) if kk}
        return substitute_symbols(body, subs)

    def _point_guard(self, cube: PsAxesCube, guarded_axes: list[bool], k: tuple[int, ...]) -> PsExpression | None:
        """Point `k` lies in the iteration space, or None where the GPU axes' own guard (point 0's) implies it:
        along the axes that are not `guarded_axes`, the fold divides the points.

        Where the fold divides the points of an axis (sizes known when the code is generated), no point of a
        thread whose first point is inside can lie beyond, and that axis adds nothing to the guards: they would
        be instructions that are always true, and they change what ptxas allocates, which can decide the blocks
        per SM (docs/model/index.md, "Occupancy and waves")."""
        terms = [
            PsLt(self._shifted(r, kk), r.stop.clone())
            for r, guarded, kk in zip(cube.ranges, guarded_axes, k)
            if kk and guarded
        ]
        return self._type_fold(reduce(PsAnd, terms)) if terms else None

    def _guarded_load(
        self, cube: PsAxesCube, guarded_axes: list[bool], access: PsBufferAcc, users: set
    ) -> PsExpression:
        """The load, executed if any point that uses it is active."""
        minimal = [k for k in users if not any(o != k and all(a <= b for a, b in zip(o, k)) for o in users)]
        guards = [self._point_guard(cube, guarded_axes, k) for k in sorted(minimal)]
        if any(g is None for g in guards):
            return access
        return PsTernary(reduce(PsOr, guards), access, PsExpression.make(PsConstant(0)))

    def _hoist_loads(self, node, point: tuple[int, ...], hoisted: dict) -> None:
        """Replace every unconditional load in `node` by the symbol of its distinct address."""
        if isinstance(node, (PsConditional, PsLoop, PsTernary)):
            return  # loads under their own conditions stay where they are
        children = list(node.children)
        first = 1 if isinstance(node, PsAssignment) else 0  # the stored-to access is no load
        for i in range(first, len(children)):
            child = children[i]
            if isinstance(child, PsBufferAcc):
                children[i] = PsSymbolExpr(self._load_symbol(child, point, hoisted))
            else:
                self._hoist_loads(child, point, hoisted)
        node.children = children

    def _load_symbol(self, access: PsBufferAcc, point: tuple[int, ...], hoisted: dict):

        def counter(name, where):
            return sp.Symbol(name, integer=True)

        where = f"fold {self._fold}: load from {access.buffer.name!r}"
        key = (access.buffer.name,) + tuple(sp.expand(ps_to_sympy(i, counter, where)) for i in access.index)
        if key not in hoisted:
            symbol = self._ctx.get_new_symbol(f"{access.buffer.name}_ld", access.get_dtype())
            hoisted[key] = (symbol, access, set())
        hoisted[key][2].add(point)
        return hoisted[key][0]


def _fold_divides(rng: PsAxisRange, fold: int) -> bool:
    """The range has a number of points known at generation time, and `fold` divides it."""

    def symbol(name, where):
        return sp.Symbol(name, integer=True)

    start, stop, step = (ps_to_sympy(e, symbol, "folded range") for e in (rng.start, rng.stop, rng.step))
    points = sp.ceiling((stop - start) / step)
    return bool(points.is_Integer and step.is_positive and points % fold == 0)


def create_folded_kernel(assignments, config=None, *, fold=NO_FOLD, block=None, device=None) -> GpuKernel:
    """A CUDA or HIP kernel from `assignments` whose threads each update `fold` points, launched with `block`.

    :param config: a pystencils ``CreateKernelConfig`` (see `gpu_config`).
    :param fold: points per thread along (x, y, z); (1, 1, 1) is pystencils' own kernel.
    :param block: the block size of the kernel's launch configuration (``gpu.default_block_size``).
    :param device: the `Device` whose vendor decides the target (HIP for AMD, CUDA for NVIDIA); None keeps the
        configuration's CUDA or HIP target, else CUDA.
    """
    fold = _check_fold(fold)
    cfg = gpu_config(config, device)
    if block is not None:
        _set_block(cfg, block)
    _check_accesses(assignments)
    driver = DefaultKernelCreationDriver(cfg) if fold == NO_FOLD else _folding_driver(cfg, fold)
    try:
        return driver(assignments)
    except _pystencils_errors() as e:  # pystencils' own complaint about the assignments
        raise HarvestError(
            f"pystencils cannot generate a {target_name(cfg.target)} kernel from these assignments: "
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        ) from None


def _set_block(cfg, block) -> None:
    """Launch with `block`; a HIP kernel also declares it as its launch bounds, unless the configuration
    sets ``gpu.generate_launch_bounds``.

    AMD's compiler sizes a HIP kernel's register budget for 1024 threads per
    block unless ``__launch_bounds__`` promise fewer (clang's
    ``--gpu-max-threads-per-block`` default), which caps a CDNA2 kernel (MI210)
    at 128 VGPRs; declaring the chosen block lets a kernel of 256 threads use
    the registers the occupancy model grants it.
    """
    import pystencils as ps

    cfg.gpu.default_block_size = tuple(int(b) for b in block)
    if cfg.target == ps.Target.HIP and cfg.gpu.generate_launch_bounds is None:
        cfg.gpu.generate_launch_bounds = True


def _folding_driver(cfg, fold):
    """pystencils' driver with the folding axes and indexing (`compat.driver_with`), if `cfg` allows folding."""
    scheme = GpuIndexingScheme(cfg.gpu.get_option("indexing_scheme"))
    if scheme != GpuIndexingScheme.Linear3D:
        raise ConfigurationError(f"thread folding needs the Linear3D GPU indexing scheme, not {scheme.name}")
    if cfg.gpu.get_option("manual_launch_grid"):
        raise ConfigurationError("thread folding computes the launch grid: unset gpu.manual_launch_grid")
    if cfg.get_option("skip_independence_check"):
        raise ConfigurationError("thread folding shares loads between points: it needs pystencils' independence check")
    return driver_with(cfg, lambda ctx, cfg: FoldedIndexing(ctx, cfg, fold), lambda ctx: FoldingAxes(ctx, fold))


def _pystencils_errors() -> tuple[type[Exception], ...]:
    """The exceptions pystencils raises for assignments it cannot generate code for."""
    import inspect

    import pystencils.backend.exceptions as backend
    from pystencils.codegen.errors import CodegenError

    return (CodegenError, *(c for _, c in inspect.getmembers(backend, inspect.isclass) if issubclass(c, Exception)))


def _check_accesses(assignments) -> None:
    """Refuse a field access whose offset is a symbol (``src[k, 0, 0]``): pystencils cannot size its ghost layers
    (it fails converting the symbol to an int), and the model needs offsets fixed at generation time; and a field
    of more than 3 spatial dimensions, whose iteration space pystencils' GPU backend cannot map to threads."""
    import pystencils as ps

    listed = assignments.all_assignments if isinstance(assignments, ps.AssignmentCollection) else assignments
    for assignment in listed:
        for access in sorted(assignment.atoms(ps.Field.Access), key=str):
            if access.field.spatial_dimensions > 3:
                raise HarvestError(
                    f"field {access.field.name!r} has {access.field.spatial_dimensions} spatial "
                    "dimensions: a GPU kernel's threads span at most 3 (declare the others as index "
                    "dimensions, e.g. ps.fields('f(4): double[16, 16, 16]'))"
                )
            variable = [o for o in access.offsets if not sp.sympify(o).is_Integer]
            if variable and not access.is_absolute_access:
                text = f"{access.field.name}[{', '.join(map(str, access.offsets))}]"
                raise HarvestError(
                    f"access {text} in the assignment to {assignment.lhs} has a non-constant offset "
                    f"({', '.join(map(str, variable))}): stencil offsets must be integers known when "
                    "the kernel is generated"
                )


def _check_fold(fold) -> tuple[int, int, int]:
    fold = tuple(fold)
    if len(fold) != 3 or any(not isinstance(f, int) or f < 1 for f in fold):
        raise ConfigurationError(f"fold must be three positive integers (x, y, z), got {fold!r}")
    return fold
