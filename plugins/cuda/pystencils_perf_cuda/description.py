"""A declarative description of a hand-written CUDA kernel, in Python or TOML.

What pystencils-perf needs of a kernel is small: its arrays (dtype, shape,
layout, alignment), the address of every load and store as an expression over
``threadIdx``, ``blockIdx`` and ``blockDim``, the iteration space in threads
with its guard, and per-thread loops. `CudaKernel.model` turns that into a
`KernelModel`; every mistake gives a `HarvestError` naming the key or access.
"""

from __future__ import annotations

import math
import numbers
import tomllib
from dataclasses import dataclass, field, fields, replace

import sympy as sp
from pystencils_perf.errors import HarvestError
from pystencils_perf.kernel import (
    BDIM,
    BID,
    INEQUALITIES,
    TID,
    Access,
    AccessKind,
    Field,
    HarvestOptions,
    KernelModel,
    Loop,
    base_offset,
    nonnegative_form,
    require_affine,
)

from .expressions import Scope, parse, parse_access, parse_block_condition, parse_block_expression

#: how far nvcc unrolls a loop whose trip count differs between threads (`CudaKernel.load_loop_bounds`): read in
#: KTT's counters of its convolution's copy on an RTX 2080 Ti, where 4 fits and 2 and 8 do not
#: (validation/rtx2080ti_convolution/shared_wavefronts.md, "The copy's stores")
NVCC_RUNTIME_UNROLL = 4
#: element size in bytes of the CUDA and numpy type names a description may use
DTYPE_BYTES = {
    "double": 8, "float64": 8, "float": 4, "float32": 4, "half": 2, "__half": 2, "float16": 2, "bfloat16": 2,
    "int": 4, "int32": 4, "unsigned": 4, "uint32": 4, "long long": 8, "int64": 8, "uint64": 8,
    "short": 2, "int16": 2, "char": 1, "int8": 1, "uint8": 1,
    "float2": 8, "float4": 16, "double2": 16, "int2": 8, "int4": 16,
}  # fmt: skip


@dataclass(frozen=True)
class Array:
    """A global-memory array: shape in elements (ints or constant names), row-major ("C") or column-major ("F")."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]
    order: str = "C"
    strides: tuple[int | str, ...] | None = None
    base_offset_bytes: int = 0
    #: loaded with ``__ldg``, whose loads the throughput model prices at a rate fitted on ``__ldg`` of an int index
    #: (nvcc recomputes each such load's address); or the name of a constant that says so (nonzero: read-only), for
    #: a tunable switch. A ``const __restrict__`` array's loads compile like plain ones: leave it False
    read_only: bool | str = False


@dataclass(frozen=True)
class SharedArray:
    """A ``__shared__`` array of one block, row-major: its extents are numbers or expressions of ``blockDim`` and
    constants (``"blockDim.y * tsy + 14"``); `pitch`, where given, the elements from one row to the next where
    rows are padded (an expression that may take remainders of ``blockDim``), else the last extent. `static`:
    declared with its size (``__shared__ float sh[H][W]``, the size compiled in for each block size), which nvcc
    allocates only up to 48 KiB per block; False for ``extern __shared__`` memory sized at launch."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]
    pitch: int | str | None = None
    static: bool = True


@dataclass(frozen=True)
class CudaKernelModel(KernelModel):
    """A `KernelModel` that also says which arrays are loaded through the read-only (texture) path.

    Performance models that price that path differently read `read_only_fields`;
    everything else sees an ordinary `KernelModel` (folding keeps the subclass).
    """

    read_only_fields: tuple[str, ...] = ()
    #: the unguarded shared accesses of several indices, one entry per index: (the access as written, the shared
    #: array, its axis, the index, the array's extent along it), the index affine in the thread index and loop
    #: counters, its coefficients and the extent expressions of ``blockDim``
    shared_indices: tuple[tuple[str, str, int, sp.Expr, sp.Expr], ...] = ()

    def shared_index_outside(self, block: tuple[int, int, int]) -> str | None:
        """Why blocks of `block` threads cannot run this code as described: an unguarded shared access whose index
        along some axis leaves its array's extent there (C indexes each axis on its own: ``tile[x][y]`` of a
        ``[64][16]`` tile with ``y`` up to 63 stays within the tile's bytes but is no element of it). Ranges
        over every thread and loop iteration; None where all stay inside."""
        ranges = {t: (0, b - 1) for t, b in zip(TID, block)}
        ranges.update({lp.counter: (min(lp.values), max(lp.values)) for lp in self.loops})
        numbers = dict(zip(BDIM, block))
        for text, array, axis, index, extent in self.shared_indices:
            form = sp.expand(index.xreplace(numbers))
            low = high = int(form.xreplace(dict.fromkeys(form.free_symbols, 0)))
            for symbol in form.free_symbols:
                k, (first, last) = int(form.coeff(symbol)), ranges[symbol]
                low, high = low + min(k * first, k * last), high + max(k * first, k * last)
            size = int(sp.sympify(extent.xreplace(numbers)))
            if low < 0 or high >= size:
                reach = low if low < 0 else high
                return (
                    f"the shared {text}: its index {index} along axis {axis} reaches {reach} in blocks of "
                    f"{'x'.join(map(str, block))}, outside the {size} elements of shared array {array!r} there"
                )
        return None

    def loads_through_read_only_path(self) -> frozenset[str]:
        """Hand-written code says which: its ``__ldg`` arrays (`read_only_fields`). The others count as ordinary
        loads, ``const __restrict__`` ones too, though nvcc may load those through the read-only path as well."""
        return frozenset(self.read_only_fields)


@dataclass(frozen=True)
class CudaKernel:
    """A hand-written CUDA kernel as pystencils-perf sees it.

    :param threads: the iteration space in threads per axis (x, y, z); the grid
        is ``ceil(threads / blockDim)`` per axis.
    :param loads: accesses such as ``"in[y][x]"`` or ``"A[i * n + j]"`` (one
        index means the element offset).
    :param indices: named index expressions, e.g. ``{"x": "blockIdx.x * blockDim.x + threadIdx.x"}``.
    :param guard: the kernel's ``if``; None means every axis' global index
        ``blockIdx * blockDim + threadIdx`` stays below its thread count. It
        decides which points count as updates, and guards the stores.
    :param load_guard: the loads' own ``if``, where the code guards them with
        another condition than the stores (default: `guard`).
    :param guarded_when: a condition on ``blockDim`` and constants, where the
        code has its guards only for some block sizes (Kernel Tuner's ``#if``):
        for the other block sizes every access runs and every point counts.
    :param loops: per-thread loops ``{counter: (start, stop)}`` or ``(start, stop, step)``;
        every iteration counts as one update.
    :param load_loops: per-thread loops that only load, such as a block's cooperative copy of
        its tile into shared memory (``for (i = threadIdx.y; i < h; i += blockDim.y)``, written
        as a counter over the copy's rows with ``threadIdx.y + i * blockDim.y < h`` in
        `load_guard`); their iterations are not updates, the stores run once per update.
    :param load_loop_bounds: the condition a load loop runs while, where the loop has one of its own
        (``{"c": "col < blockDim.x + 2"}`` for ``for (col = threadIdx.x; col < blockDim.x + 2; col +=
        blockDim.x)``), so that the threads of a warp make different numbers of iterations: nvcc unrolls such a
        loop by `runtime_unroll` and runs the iterations left over first, one by one, then the groups; a warp whose
        threads make different numbers issues each of the rest for the threads that have it, and each group once
        for all of its threads, each at its own iteration (`Loop.splits_lanes`); a group's loads go at once, each
        of the rest alone (`Access.loads_in_flight`). The loop's range must hold every iteration the condition lets
        run. The condition guards the copy's accesses with `load_guard`.
    :param runtime_unroll: that unrolling's factor (`NVCC_RUNTIME_UNROLL`); 1 issues each iteration once.
    :param constants: integers the other entries may name.
    :param source: the kernel's CUDA file; where nvcc or NVRTC is installed it is compiled
        (with `defines` as ``-D`` macros) for the device's architecture, so that
        occupancy follows from the registers of the code and not from
        `registers_per_thread` or the thread count alone.
    :param function: the ``__global__`` function in `source` (default: `name`).
    :param block_size_names: the macros `source` takes the block size from, x first (Kernel Tuner's
        ``block_size_x``, ``block_size_y``, ``block_size_z``): it is then compiled once per block size,
        and each launch's occupancy follows from its own code's registers.
    :param shared_memory_bytes: shared memory per block in bytes: a number, or an expression of
        ``blockDim`` and constants where the kernel sizes its shared array by the block, e.g.
        ``"(blockDim.y + 2) * (blockDim.x + 2) * 4"``; occupancy counts it per block size. Default: the
        bytes of `shared_arrays`.
    :param shared_arrays: the block's ``__shared__`` arrays (`SharedArray`).
    :param shared_stores: stores into them, such as a tile's copy ``"tile[row][col]"``, under `load_guard`
        and over `load_loops` like the copy's global loads.
    :param shared_loads: loads from them, such as ``"tile[threadIdx.y + yi * blockDim.y + i][...]"``, over
        `loops` and `inner_loops`; unguarded unless `shared_load_guard` says when they run. A thread loads a value
        once however many of its iterations read it, as nvcc keeps it in a register.
    :param inner_loops: per-update loops whose iterations are not updates (a filter's taps over the staged tile),
        ``{counter: (start, stop)}``.
    :param computes_outside_guard: every thread computes all of its outputs and `guard` skips only their stores
        (tiled code as Kernel Tuner's convolution writes it): the blocks at the grid's edge cost the SMs as much as
        the others, however few of their points are updates.
    """

    name: str
    arrays: tuple[Array, ...]
    threads: tuple[int | str, ...]
    loads: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    indices: dict[str, str] = field(default_factory=dict)
    guard: str | None = None
    load_guard: str | None = None
    guarded_when: str | None = None
    loops: dict[str, tuple] = field(default_factory=dict)
    load_loops: dict[str, tuple] = field(default_factory=dict)
    load_loop_bounds: dict[str, str] = field(default_factory=dict)
    runtime_unroll: int = NVCC_RUNTIME_UNROLL
    constants: dict[str, int] = field(default_factory=dict)
    flops_per_lup: float = 0.0
    registers_per_thread: int | None = None
    shared_memory_bytes: int | str = 0
    source: str | None = None
    function: str | None = None
    defines: dict[str, int | str] = field(default_factory=dict)
    block_size_names: tuple[str, ...] = ()
    shared_arrays: tuple[SharedArray, ...] = ()
    shared_loads: tuple[str, ...] = ()
    shared_stores: tuple[str, ...] = ()
    shared_load_guard: str | None = None
    inner_loops: dict[str, tuple] = field(default_factory=dict)
    computes_outside_guard: bool = False

    def model(self, options: HarvestOptions | None = None) -> KernelModel:
        """The `KernelModel` of this description (what the adapter plugin returns)."""
        return _Builder(self, options or HarvestOptions()).model()


class _Builder:
    def __init__(self, desc: CudaKernel, options: HarvestOptions):
        self.desc, self.options = desc, options
        self.where = f"CUDA kernel {desc.name!r}"
        for name, value in desc.constants.items():
            if type(value) is not int:
                raise HarvestError(f"{self.where}: constant {name!r} = {value!r} is not an integer")
        self.scope = Scope(constants=dict(desc.constants), indices=dict(desc.indices))
        self.loops = [self._loop(name, bounds) for name, bounds in desc.loops.items()]
        for first, second in (("loops", "load_loops"), ("loops", "inner_loops"), ("load_loops", "inner_loops")):
            clash = set(getattr(desc, first)) & set(getattr(desc, second))
            if clash:
                raise HarvestError(f"{self.where}: {sorted(clash)[0]!r} is in both {first} and {second}")
        self.load_loops = [replace(self._loop(name, bounds), updates=False) for name, bounds in desc.load_loops.items()]
        self.inner_loops = [
            replace(self._loop(name, bounds), updates=False) for name, bounds in desc.inner_loops.items()
        ]
        self.block_values: list[tuple[sp.Symbol, sp.Expr]] = []
        self.shared_indices: list[tuple[str, str, int, sp.Expr, sp.Expr]] = []

    def _integer(self, value, where: str) -> int:
        result = parse(value, self.scope, where) if isinstance(value, str) else value
        if isinstance(result, sp.Integer):
            result = int(result)
        if type(result) is not int:
            raise HarvestError(f"{where}: {value!r} is not an integer or a constant's name")
        return result

    def _loop(self, name: str, bounds) -> Loop:
        where = f"{self.where}: loop {name!r}"
        if not isinstance(bounds, (tuple, list)) or len(bounds) not in (2, 3):
            raise HarvestError(f"{where}: give (start, stop) or (start, stop, step), got {bounds!r}")
        start, stop, *step = (self._integer(b, where) for b in bounds)
        if (step and step[0] < 1) or stop <= start:
            raise HarvestError(f"{where}: range{tuple(bounds)} is empty or has a step below 1")
        counter = sp.Symbol(f"loop.{name}", integer=True)
        self.scope.loops[name] = counter
        return Loop(counter, start, stop, *step)

    def _field(self, array: Array) -> Field:
        where = f"{self.where}: array {array.name!r}"
        if array.dtype not in DTYPE_BYTES:
            raise HarvestError(f"{where}: unknown dtype {array.dtype!r} (known: {', '.join(DTYPE_BYTES)})")
        if not array.shape:
            raise HarvestError(f"{where} has no shape")
        shape = tuple(self._integer(n, f"{where}: shape") for n in array.shape)
        if any(n < 1 for n in shape):
            raise HarvestError(f"{where}: shape {shape} has an empty axis")
        if array.strides is not None:
            strides = tuple(self._integer(s, f"{where}: strides") for s in array.strides)
            if len(strides) != len(shape):
                raise HarvestError(f"{where}: {len(strides)} strides for {len(shape)} dimensions")
        elif array.order in ("C", "F"):
            axes = range(len(shape)) if array.order == "F" else reversed(range(len(shape)))
            strides, step = [0] * len(shape), 1
            for a in axes:
                strides[a], step = step, step * shape[a]
            strides = tuple(strides)
        else:
            raise HarvestError(f"{where}: order must be 'C' or 'F', got {array.order!r}")
        offset = self.options.base_offsets_bytes.get(array.name, array.base_offset_bytes)
        return Field(array.name, DTYPE_BYTES[array.dtype], shape, strides, base_offset(offset), array.dtype)

    def _block_number(self, value, where: str) -> sp.Expr:
        """An extent or pitch of a shared array: a number, or an expression of blockDim and constants."""
        if not isinstance(value, str):
            if type(value) is not int or value < 1:
                raise HarvestError(f"{where} = {value!r} is not a positive integer or an expression of blockDim")
            return sp.Integer(value)
        expr = parse_block_expression(value, self.scope, where)
        if not isinstance(expr, sp.Expr) or expr.free_symbols - set(BDIM):
            raise HarvestError(f"{where} {value!r} is not an expression of blockDim and constants")
        return expr

    def _shared_array(self, array: SharedArray) -> tuple[Field, sp.Expr]:
        """The shared array as a `Field` whose strides name `block_values` where they follow the block size, and
        its bytes per block."""
        where = f"{self.where}: shared array {array.name!r}"
        if array.dtype not in DTYPE_BYTES:
            raise HarvestError(f"{where}: unknown dtype {array.dtype!r} (known: {', '.join(DTYPE_BYTES)})")
        if not array.shape:
            raise HarvestError(f"{where} has no shape")
        shape = [self._block_number(n, f"{where}: shape") for n in array.shape]
        row = shape[-1] if array.pitch is None else self._block_number(array.pitch, f"{where}: pitch")
        strides = [sp.Integer(1)]
        for extent in reversed(shape[1:-1] + [row] if len(shape) > 1 else []):
            strides.insert(0, strides[0] * extent)
        named = []
        for axis, stride in enumerate(strides):
            if stride.is_Integer:
                named.append(int(stride))
                continue
            symbol = sp.Symbol(f"{array.name}.stride{axis}", integer=True, positive=True)
            self.block_values.append((symbol, stride))
            named.append(symbol)
        element = DTYPE_BYTES[array.dtype]
        field_ = Field(array.name, element, tuple(shape), tuple(named), 0, array.dtype)
        return field_, shape[0] * strides[0] * element

    def _access(self, text: str, kind: AccessKind, fields: dict[str, Field], predicate, shared=False) -> Access:
        where = f"{self.where}: {'shared ' if shared else ''}{kind.value} {text!r}"
        name, index = parse_access(text, self.scope, where)
        if name not in fields:
            known = ", ".join(fields) or "none"
            raise HarvestError(f"{where}: unknown {'shared ' if shared else ''}array {name!r} (arrays: {known})")
        f = fields[name]
        if len(index) == 1 and shared and len(f.shape) > 1:
            raise HarvestError(
                f"{where}: 1 index for the {len(f.shape)} dimensions of {name!r}: in CUDA that is a row, not an "
                "element; index each dimension"
            )
        if len(index) == 1:
            address = index[0]  # an element offset, as in flat CUDA code
        elif len(index) == len(f.shape):
            address = sum(i * s for i, s in zip(index, f.strides))
            if shared and predicate is sp.true:
                self.shared_indices += [
                    (f"{kind.value} {text!r}", name, axis, i, n) for axis, (i, n) in enumerate(zip(index, f.shape))
                ]
        else:
            raise HarvestError(f"{where}: {len(index)} indices for the {len(f.shape)} dimensions of {name!r}")
        if shared and address.free_symbols & set(BID):
            raise HarvestError(f"{where}: a block's shared array is indexed by blockIdx")
        self._check_symbols(address, where)
        return Access(name, kind, require_affine(address, where), predicate)

    def _check_symbols(self, expr, where: str) -> None:
        allowed = set(TID + BID + BDIM) | set(self.scope.loops.values()) | {s for s, _ in self.block_values}
        if expr.free_symbols - allowed:  # pragma: no cover - the parser admits no other names
            raise HarvestError(f"{where}: depends on {sorted(map(str, expr.free_symbols - allowed))}")

    def _guard(self, text: str | None, key: str, threads: tuple[int, int, int]) -> sp.Basic:
        if text is None:
            return sp.And(*(sp.Lt(BDIM[a] * BID[a] + TID[a], n) for a, n in enumerate(threads) if n > 1))
        where = f"{self.where}: {key}"
        guard = parse(text, self.scope, where)
        if not isinstance(guard, sp.logic.boolalg.Boolean):
            raise HarvestError(f"{where} {text!r} is no condition")
        for rel in guard.args if isinstance(guard, sp.And) else (guard,):
            if isinstance(rel, sp.Ne) or not isinstance(rel, sp.core.relational.Relational):
                raise HarvestError(f"{where} {text!r}: {rel} is not an affine inequality or equality")
            require_affine(rel.lhs - rel.rhs, f"{where} {text!r}")
        return guard

    def _unrolled_paths(self):
        """The copy's code paths where nvcc unrolls its load loops at run time (`CudaKernel.load_loop_bounds`): a
        function that gives an access as its copies on those paths (itself where it is in no bounded loop). Sets
        `copy_loops`, the loops the paths run over. Unrolled by U, a lane that makes T iterations runs the T mod U
        left over first, one by one, then T div U groups of U together; lanes whose T differ modulo U run a group at
        other iterations, and a warp issues it once for all of them. So a bounded loop's counter becomes
        ``single`` on the path of the iterations left over and ``leftover + U * group + unrolled`` on the groups'
        path, where ``T = leftover + U * whole`` is the lane's class of trip counts (`Loop.splits_lanes`); with a
        factor of 1 the bound only guards the loop's accesses. Both paths touch what the loop touches: only its
        requests, wavefronts and the loads a warp waits for at once change (a group's all together, the rest one
        by one: `Access.loads_in_flight`)."""
        self.copy_loops = []
        unknown = set(self.desc.load_loop_bounds) - set(self.desc.load_loops)
        if unknown:
            raise HarvestError(f"{self.where}: load_loop_bounds names {sorted(unknown)[0]!r}, which is no load loop")
        factor = self.desc.runtime_unroll
        if type(factor) is not int or factor < 1:
            raise HarvestError(f"{self.where}: runtime_unroll = {factor!r} is not a positive integer")
        if self.desc.load_loop_bounds and self.desc.guarded_when is not None:
            raise HarvestError(
                f"{self.where}: guarded_when would compile load_loop_bounds out with the other guards; leave "
                "guarded_when out and write load_guard for every block size"
            )
        bounded = {self.scope.loops[name] for name in self.desc.load_loop_bounds}
        paths = [(sp.true, {}, 0)]  # (condition, substitutions, loads in flight)
        for loop in self.load_loops:
            name = loop.counter.name.removeprefix("loop.")
            if name not in self.desc.load_loop_bounds:
                self.copy_loops.append(loop)
                continue
            left = self._loop_bound(name, loop)  # >= 0 where the iteration runs
            if factor == 1:
                self.copy_loops.append(loop)
                paths = [(sp.And(condition, sp.Ge(left, 0)), at, n) for condition, at, n in paths]
                continue
            count = len(loop.values)
            leftover, whole, single, group, unrolled = (
                sp.Symbol(f"loop.{name}.{part}", integer=True)
                for part in ("leftover", "whole", "single", "group", "unrolled")
            )
            self.copy_loops += [
                Loop(leftover, 0, factor, updates=False, splits_lanes=True),
                Loop(whole, 0, count // factor + 1, updates=False, splits_lanes=True),
                Loop(single, 0, factor - 1, updates=False),
                Loop(group, 0, -(-count // factor), updates=False),
                Loop(unrolled, 0, factor, updates=False),
            ]
            trips = leftover + factor * whole

            def iteration(index):
                return loop.start + loop.step * index

            # the lane's class: its last iteration runs and the next does not (the loop's range holds every
            # iteration its bound lets run)
            makes = sp.And(
                sp.Ge(trips, 1),
                sp.Le(trips, count),
                sp.Ge(left.subs(loop.counter, iteration(trips - 1)), 0),
                sp.Lt(left.subs(loop.counter, iteration(trips)), 0),
            )
            branches = (
                ({loop.counter: iteration(single)}, sp.Lt(single, leftover), 1),
                ({loop.counter: iteration(leftover + factor * group + unrolled)}, sp.Lt(group, whole), factor),
            )
            paths = [
                (sp.And(condition, makes, branch), {**substitutions, **at}, in_flight)
                for condition, substitutions, _ in paths
                for at, branch, in_flight in branches
            ]

        def on_paths(access: Access) -> list[Access]:
            if not (access.address.free_symbols | access.predicate.free_symbols) & bounded:
                return [access]  # not in a bounded loop: once
            return [
                Access(
                    access.field,
                    access.kind,
                    sp.expand(access.address.subs(at)),
                    sp.And(access.predicate.subs(at), condition),
                    in_flight if access.kind is AccessKind.LOAD else 0,
                )
                for condition, at, in_flight in paths
            ]

        return on_paths

    def _loop_bound(self, name: str, loop: Loop) -> sp.Expr:
        """`CudaKernel.load_loop_bounds` of loop `name` as an affine f that is >= 0 where an iteration runs, with a
        negative coefficient of the loop's counter: it holds on the first iterations and on none after the first
        where it fails."""
        text = self.desc.load_loop_bounds[name]
        where = f"{self.where}: load_loop_bounds {name!r} {text!r}"
        bound = parse(text, self.scope, where) if isinstance(text, str) else None
        if not isinstance(bound, INEQUALITIES):
            raise HarvestError(f"{where} is not one inequality (<, <=, >, >=)")
        f = require_affine(sp.expand(nonnegative_form(bound)), where)
        step = f.coeff(loop.counter).subs({b: sp.Symbol(b.name, positive=True) for b in BDIM})
        if step.is_negative is not True:
            raise HarvestError(f"{where}: it must fail from some iteration on, as a loop's condition does")
        return f

    def _flops_per_lup(self) -> float:
        value = self.desc.flops_per_lup
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < math.inf:
            raise HarvestError(f"{self.where}: flops_per_lup = {value!r} is not a number of at least 0")
        return float(value)

    def _registers_per_thread(self) -> int | None:
        value = self.desc.registers_per_thread
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
            raise HarvestError(f"{self.where}: registers_per_thread = {value!r} is not a positive integer")
        return None if value is None else int(value)

    def _read_only(self, array: Array) -> bool:
        if isinstance(array.read_only, str):
            return self._integer(array.read_only, f"{self.where}: array {array.name!r}: read_only") != 0
        return bool(array.read_only)

    def _shared_memory(self, arrays_bytes: list[sp.Expr]) -> dict:
        value, where = self.desc.shared_memory_bytes, f"{self.where}: shared_memory_bytes"
        if value == 0 and arrays_bytes:
            return {"block_shared_memory_bytes": sp.Add(*arrays_bytes)}
        if not isinstance(value, str):
            if type(value) is not int or value < 0:
                raise HarvestError(f"{where} = {value!r} is not a non-negative integer or an expression of blockDim")
            return {"shared_memory_bytes": value}
        expr = parse_block_expression(value, self.scope, where)
        if not isinstance(expr, sp.Expr) or expr.free_symbols - set(BDIM):
            raise HarvestError(f"{where} {value!r} is not an expression of blockDim and constants")
        return {"block_shared_memory_bytes": expr}

    def _threads(self) -> tuple[int, int, int]:
        where = f"{self.where}: threads"
        if not 1 <= len(self.desc.threads) <= 3:
            raise HarvestError(f"{where}: give 1 to 3 thread counts (x, y, z), got {self.desc.threads!r}")
        threads = tuple(self._integer(n, where) for n in self.desc.threads) + (1,) * (3 - len(self.desc.threads))
        if any(n < 1 for n in threads):
            raise HarvestError(f"{where}: {threads} has an empty axis")
        return threads

    def model(self) -> KernelModel:
        if self.options.domain_shape is not None or self.options.field_strides or self.options.align != "base":
            raise HarvestError(
                f"{self.where}: sizes, strides and alignment come from the description "
                "(constants, Array.shape/strides/base_offset_bytes), not from harvest options"
            )
        arrays = [a for a in self.desc.arrays]
        names = [a.name for a in arrays]
        duplicate = {n for n in names if names.count(n) > 1}
        if duplicate:
            raise HarvestError(f"{self.where}: array {sorted(duplicate)[0]!r} is described twice")
        unknown = set(self.options.base_offsets_bytes) - set(names)
        if unknown:
            raise HarvestError(f"{self.where} has no array {sorted(unknown)[0]!r} to give a base offset")
        fields_ = {a.name: self._field(a) for a in arrays}
        threads = self._threads()
        domain = self._guard(self.desc.guard, "guard", threads)
        load_guard = (
            domain if self.desc.load_guard is None else self._guard(self.desc.load_guard, "load_guard", threads)
        )
        copy_counters = {lp.counter for lp in self.load_loops}
        if domain.free_symbols & copy_counters:
            raise HarvestError(
                f"{self.where}: guard {self.desc.guard!r} depends on a load loop; an update happens once "
                "per thread and loop iteration, whatever the loads before it"
            )
        if self.desc.guarded_when is not None and load_guard.free_symbols & copy_counters:
            raise HarvestError(
                f"{self.where}: guarded_when would compile the load loops' bounds in load_guard out with "
                "the other guards; leave guarded_when out and write load_guard for every block size"
            )
        guarded_when = (
            sp.true
            if self.desc.guarded_when is None
            else parse_block_condition(self.desc.guarded_when, self.scope, f"{self.where}: guarded_when")
        )
        on_paths = self._unrolled_paths()
        accesses = [a for t in self.desc.loads for a in on_paths(self._access(t, AccessKind.LOAD, fields_, load_guard))]
        accesses += [self._access(t, AccessKind.STORE, fields_, domain) for t in self.desc.stores]
        if not any(a.kind is AccessKind.STORE for a in accesses):
            raise HarvestError(f"{self.where} has no store")
        unique = list(dict.fromkeys(accesses))  # one thread loading one address twice counts once
        shared_fields, shared_bytes = {}, []
        for array in self.desc.shared_arrays:
            if array.name in fields_ or array.name in shared_fields:
                raise HarvestError(f"{self.where}: array {array.name!r} is described twice")
            shared_fields[array.name], size = self._shared_array(array)
            shared_bytes.append(size)
        shared_load_guard = (
            sp.true
            if self.desc.shared_load_guard is None
            else self._guard(self.desc.shared_load_guard, "shared_load_guard", threads)
        )
        shared = [
            a
            for t in self.desc.shared_stores
            for a in on_paths(self._access(t, AccessKind.STORE, shared_fields, load_guard, True))
        ]
        shared += [
            self._access(t, AccessKind.LOAD, shared_fields, shared_load_guard, True) for t in self.desc.shared_loads
        ]
        inner = {lp.counter for lp in self.inner_loops}
        outside = [a for a in accesses if a.address.free_symbols & inner]
        if outside:
            raise HarvestError(
                f"{self.where}: {outside[0]} depends on an inner loop; only shared loads may (global loads of "
                "each tap belong in loops or indices)"
            )
        return CudaKernelModel(
            name=self.desc.name,
            fields=tuple(fields_.values()),
            accesses=tuple(unique),
            work_items=threads,
            lattice_updates=math.prod(threads) * math.prod(len(lp.values) for lp in self.loops),
            domain=domain,
            loops=tuple(self.loops + self.copy_loops + self.inner_loops),
            shared_arrays=tuple(shared_fields.values()),
            shared_memory_is_static=bool(self.desc.shared_arrays) and all(a.static for a in self.desc.shared_arrays),
            shared_accesses=tuple(dict.fromkeys(shared)),
            block_values=tuple(self.block_values),
            flops_per_lup=self._flops_per_lup(),
            registers_per_thread=self._registers_per_thread(),
            **self._shared_memory(shared_bytes),
            generator="hand-written CUDA (pystencils-perf-cuda description)",
            read_only_fields=tuple(a.name for a in arrays if self._read_only(a)),
            shared_indices=tuple(self.shared_indices),
            merges_accesses_across_guards=False,  # written by hand: nvcc merges loads under one condition only
            loads_guarded_one_by_one=self.desc.load_guard is not None,  # the loads' own if
            guards_compiled_when=guarded_when,
            computes_outside_domain=bool(self.desc.computes_outside_guard),
        )


def _checked(table, cls, required: tuple[str, ...], where: str) -> dict:
    """`table` if it is a dict with every `required` key and no key that `cls` lacks."""
    if not isinstance(table, dict):
        raise HarvestError(f"{where}: expected a table of keys, got {type(table).__name__}")
    known = sorted(f.name for f in fields(cls))
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise HarvestError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(known)})")
    missing = [k for k in required if k not in table]
    if missing:
        raise HarvestError(f"{where}: missing key {missing[0]!r}")
    return table


def from_dict(data: dict, source: str = "description") -> CudaKernel:
    """A `CudaKernel` from plain data (a parsed TOML file): arrays as a list of tables."""
    data = _checked(data, CudaKernel, ("name", "arrays", "threads"), source)
    arrays = []
    for i, entry in enumerate(data["arrays"]):
        entry = _checked(entry, Array, ("name", "dtype", "shape"), f"{source}: arrays[{i}]")
        strides = entry.get("strides")
        arrays.append(
            Array(**{**entry, "shape": tuple(entry["shape"]), "strides": tuple(strides) if strides else None})
        )
    shared_arrays = []
    for i, entry in enumerate(data.get("shared_arrays", ())):
        entry = _checked(entry, SharedArray, ("name", "dtype", "shape"), f"{source}: shared_arrays[{i}]")
        shared_arrays.append(SharedArray(**{**entry, "shape": tuple(entry["shape"])}))
    threads = data["threads"]
    values = {
        **data,
        "arrays": tuple(arrays),
        "shared_arrays": tuple(shared_arrays),
        "threads": tuple(threads) if isinstance(threads, list) else (threads,),
    }
    for key in ("loads", "stores", "block_size_names", "shared_loads", "shared_stores"):
        values[key] = tuple(data.get(key, ()))
    for key in ("loops", "load_loops", "inner_loops"):
        values[key] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.get(key, {}).items()}
    return CudaKernel(**values)


def _read_toml(path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise HarvestError(f"{path}: not valid TOML ({err})") from None
    except UnicodeDecodeError as err:
        raise HarvestError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason})") from None


def load(path) -> CudaKernel:
    """A `CudaKernel` from a TOML file (see the plugin's README for the keys)."""
    return from_dict(_read_toml(path), str(path))


#: the keys of a TOML SPEC's ``[kernel_tuner]`` table
TUNER_KEYS = ("lattice_updates", "constants", "fixed_parameters", "block_parameters")


def spec_from_toml(path) -> dict | None:
    """The names a SPEC defines, from a TOML file with a ``[kernel]`` description, or a description alone (what
    `load` reads: its ``threads`` and ``arrays`` at the top); None for any other TOML file.

    With a ``[kernel_tuner]`` table it describes Kernel Tuner data: ``constants`` maps kernel
    constants to the tunable parameters that set them, and `kernel_for(params)` is the description
    with those values (its name says them).
    """
    data = _read_toml(path)
    if "kernel" not in data:
        return {"kernel": from_dict(data, str(path))} if {"threads", "arrays"} <= set(data) else None
    unknown = sorted(set(data) - {"kernel", "kernel_tuner", "domain_shape"})
    if unknown:
        raise HarvestError(f"{path}: unknown table {unknown[0]!r} (known: kernel, kernel_tuner, domain_shape)")
    if "kernel_tuner" not in data:
        return {"kernel": from_dict(data["kernel"], f"{path} [kernel]"), "domain_shape": data.get("domain_shape")}
    tuner, where = data["kernel_tuner"], f"{path} [kernel_tuner]"
    if not isinstance(tuner, dict) or set(tuner) - set(TUNER_KEYS):
        raise HarvestError(f"{where}: known keys are {', '.join(TUNER_KEYS)}")
    mapping = tuner.get("constants", {})
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise HarvestError(f"{where}: constants must map constant names to tunable parameter names")
    template = data["kernel"]

    def kernel_for(params: dict) -> CudaKernel:
        missing = [p for p in mapping.values() if p not in params]
        if missing:
            raise HarvestError(
                f"{where}: the data has no tunable parameter {missing[0]!r} (it has {', '.join(params)})"
            )
        values = {c: params[p] for c, p in mapping.items()}
        wrong = [p for c, p in mapping.items() if type(values[c]) is not int]
        if wrong:
            raise HarvestError(f"{where}: tunable parameter {wrong[0]!r} = {params[wrong[0]]!r} is not an integer")
        label = " ".join(f"{p}={params[p]}" for p in mapping.values())
        table = {
            **template,
            "constants": {**template.get("constants", {}), **values},
            "name": f"{template.get('name', 'kernel')} {label}".strip(),
        }
        return from_dict(table, f"{path} [kernel] with {label}")

    namespace = {"kernel_for": kernel_for, "fixed_parameters": tuner.get("fixed_parameters", {})}
    namespace.update({k: tuner[k] for k in ("lattice_updates", "block_parameters") if k in tuner})
    return namespace
