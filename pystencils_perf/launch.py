"""Launch candidates: thread-block size times thread folding, and the default space.

This module is also the built-in plugin that contributes the default candidate
space (`perf_candidates`) and rejects candidates a device cannot run
(`perf_check_candidate`).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigurationError
from .hookspecs import hookimpl
from .vendors import GridLimits, vendor_of

DEFAULT_FOLDS = ((1, 1, 1), (1, 2, 1), (1, 1, 2))


def grid_limits(device) -> GridLimits:
    """The grid limits of `device`'s runtime: HIP's on AMD GPUs, else CUDA's."""
    return vendor_of(device).grid


@dataclass(frozen=True, order=True)
class LaunchConfig:
    """One way to launch a kernel: block size and per-thread folding, both (x, y, z)."""

    block: tuple[int, int, int]
    fold: tuple[int, int, int] = (1, 1, 1)

    def __post_init__(self):
        for name, triple in (("block", self.block), ("fold", self.fold)):
            if len(triple) != 3 or any(not isinstance(v, int) or v < 1 for v in triple):
                raise ConfigurationError(f"launch {name} must be three positive integers, got {triple!r}")

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    def grid(self, work_items: tuple[int, int, int]) -> tuple[int, int, int]:
        """Blocks per axis for a (folded) iteration space of `work_items` threads."""
        return tuple(-(-n // b) for n, b in zip(work_items, self.block))

    @property
    def label(self) -> str:
        return f"{'x'.join(map(str, self.block))} f{'x'.join(map(str, self.fold))}"


def parse_triple(text: str, what: str = "block") -> tuple[int, int, int]:
    """'32x2x16' -> (32, 2, 16): exactly three positive integers, so '32x32' is not silently a 32x32x1 block."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.strip().isdecimal() and int(p) > 0 for p in parts):
        raise ConfigurationError(f"{what} {text!r} is not of the form AxBxC with three positive integers")
    return tuple(int(p) for p in parts)


def parse_triples(value, what: str = "block") -> tuple[tuple[int, int, int], ...] | None:
    """Blocks or folds as the API and the command line take them: None (the default space), a string like
    ``"32x4x8,16x8x8"``, or a sequence of triples (or of such strings); never empty, which the default would
    silently replace."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    try:
        items = list(items)
    except TypeError:
        raise ConfigurationError(f"{what}s must be a list of triples like (32, 4, 8) or a string like "
                                 f"'32x4x8,16x8x8', got {value!r}") from None
    triples = tuple(_triple(item, what) for item in items if not (isinstance(item, str) and not item.strip()))
    if not triples:
        raise ConfigurationError(f"no {what} given (leave the {what}s out for the default ones)")
    return triples


def _triple(item, what: str) -> tuple[int, int, int]:
    if isinstance(item, str):
        return parse_triple(item.strip(), what)
    try:
        values = tuple(item)
    except TypeError:
        values = ()
    if len(values) != 3 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 for v in values):
        raise ConfigurationError(f"{what} {item!r} is not three positive integers (x, y, z)")
    return tuple(int(v) for v in values)


def power_of_two_blocks(threads: int, max_block_dim=(1024, 1024, 64), dims: int = 3) -> list[tuple[int, int, int]]:
    """Every block (bx, by, bz) of powers of two with bx*by*bz == threads, within the device's limits.

    Axes beyond the kernel's dimensionality stay 1.
    """
    if threads < 1 or threads & (threads - 1):
        raise ConfigurationError(f"thread count must be a power of two, got {threads}")
    exp = threads.bit_length() - 1
    blocks = []
    for ex, ey in itertools.product(range(exp + 1), repeat=2):
        ez = exp - ex - ey
        if ez < 0:
            continue
        block = (2**ex, 2**ey, 2**ez)
        if any(b > 1 for b in block[dims:]):
            continue
        if all(b <= m for b, m in zip(block, max_block_dim)):
            blocks.append(block)
    return blocks


#: the performance model a ranking uses unless told otherwise: the limiters plus latency, occupancy, issue, the
#: L1 pipeline and the tail wave (`models.throughput`), on every device; ``"limiters"`` is the paper's baseline
DEFAULT_MODEL = "throughput"
#: the device `rank`, `create_kernel`, `create_lb_kernel` and Kernel Tuner's `prune` rank for unless told (the
#: command line asks for one): the GPU most of the repository's measured data is of
DEFAULT_DEVICE = "A100"


@dataclass(frozen=True)
class RankOptions:
    """What the user asked of a ranking; None means the default."""

    threads: int | None = None
    blocks: tuple[tuple[int, int, int], ...] | None = None
    folds: tuple[tuple[int, int, int], ...] | None = None
    backend: str = "auto"
    #: the performance model that answers `perf_predict` (see `perf_models`)
    model: str = DEFAULT_MODEL
    #: candidate filters to apply after ranking (see `perf_prune_filters`)
    prune: tuple[str, ...] = ()
    #: values of the command-line options plugins added (`perf_addoption`), by dest
    plugin_options: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(threads=None, blocks=None, folds=None, backend="auto", model=DEFAULT_MODEL, prune=(), plugin_options=None) -> RankOptions:
        """From the user's arguments: blocks and folds as `parse_triples` takes them, None for the default."""
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ConfigurationError(f"threads per block must be a positive integer, got {threads!r}")
        if threads is not None and blocks is not None:
            raise ConfigurationError("give threads (per block of the default shapes) or explicit blocks, not both: "
                                     "explicit blocks fix their own threads")
        return RankOptions(
            threads=threads,
            blocks=parse_triples(blocks, "block"),
            folds=parse_triples(folds, "fold"),
            backend=backend,
            model=model,
            prune=(prune,) if isinstance(prune, str) else tuple(prune),
            plugin_options=dict(plugin_options or {}),
        )


@dataclass(frozen=True)
class CandidateSpace:
    """Every launch the `perf_candidates` plugins propose, split into those that can run and those rejected."""

    accepted: tuple[LaunchConfig, ...]
    rejected: tuple[tuple[LaunchConfig, str], ...]

    @property
    def folds(self) -> list[tuple[int, int, int]]:
        """The foldings among the accepted candidates, unfolded first."""
        return sorted({launch.fold for launch in self.accepted}, key=lambda f: (f != (1, 1, 1), f))


def check_threads(threads: int | None, device, name: str = "threads") -> None:
    """Refuse more threads per block than `device` runs (`name` is the argument's): no block of them exists, so no
    candidate would be proposed, and the message would blame the plugins."""
    if threads is not None and threads > device.max_threads_per_block:
        raise ConfigurationError(f"{name}: {threads} exceeds {device.name}'s limit of {device.max_threads_per_block} "
                                 "threads per block")


def candidate_space(model, device, options: RankOptions, pm=None) -> CandidateSpace:
    """The one enumeration of candidates that `rank`, `create_kernel` and `measure` share."""
    from .plugins import get_plugin_manager

    check_threads(options.threads, device)
    pm = pm or get_plugin_manager()
    seen, accepted, rejected = set(), [], []
    for contributed in pm.hook.perf_candidates(model=model, device=device, options=options):
        for launch in contributed:
            if launch in seen:
                continue
            seen.add(launch)
            reasons = [r for r in pm.hook.perf_check_candidate(model=model, launch=launch, device=device) if r]
            if reasons:
                rejected.append((launch, "; ".join(reasons)))
            else:
                accepted.append(launch)
    if not seen:
        raise ConfigurationError(f"no plugin proposes a launch candidate for kernel {model.name!r}")
    return CandidateSpace(tuple(accepted), tuple(rejected))


def default_thread_count(model) -> int:
    """1024 threads for stencils, 512 for LBM-like kernels.

    An LBM update stores a whole population (9 or more values) per cell and needs
    so many registers that 1024-thread blocks spill (Ernst et al., JPDC 2023, sec. IV.B); a
    stencil stores one or a few values.
    """
    return 512 if len(model.stores) >= 9 else 1024


def kernel_dimensions(model) -> int:
    return max([a + 1 for a, n in enumerate(model.work_items) if n > 1], default=1)


@hookimpl
def perf_candidates(model, device, options):
    threads = options.threads or default_thread_count(model)
    dims = kernel_dimensions(model)
    blocks = options.blocks or power_of_two_blocks(threads, device.max_block_dim, dims)
    folds = options.folds or tuple(f for f in DEFAULT_FOLDS if all(v == 1 for v in f[dims:]))
    return [LaunchConfig(tuple(b), tuple(f)) for f in folds for b in blocks]


@hookimpl
def perf_check_candidate(model, launch, device):
    if launch.threads_per_block > device.max_threads_per_block:
        return f"{launch.threads_per_block} threads per block exceed {device.name}'s {device.max_threads_per_block}"
    for axis, b, limit in zip("xyz", launch.block, device.max_block_dim):
        if b > limit:
            return f"block {axis} = {b} exceeds {device.name}'s limit {limit}"
    for axis, n, f in zip("xyz", model.work_items, launch.fold):
        if f > n:
            return f"fold {axis} = {f} exceeds the {n} point(s) of the iteration space along {axis}: folded points would idle"
    for axis, b, n, f in zip("xyz", launch.block, model.work_items, launch.fold):
        threads = -(-n // f)
        if b > threads:
            return f"block {axis} = {b} exceeds the {threads} threads of the (folded) iteration space: threads would idle"
    if reason := grid_limit_broken(model, launch, grid_limits(device)):
        return reason
    regs = model.registers_for(launch.fold, launch.block)
    if regs is not None:
        if regs > device.max_registers_per_thread:
            return f"{regs} registers per thread exceed {device.name}'s {device.max_registers_per_thread}"
        if device.blocks_by_registers(regs, launch.threads_per_block) == 0:
            warps = -(-launch.threads_per_block // device.warp_size)
            per_warp = device.registers_per_warp(regs)
            partitions = device.register_file_partitions
            spread = f", spread over {partitions} register files" if partitions > 1 else ""
            return (f"occupancy 0: {regs} registers x {warps} warps ({per_warp} per warp, allocated in units of "
                    f"{device.register_allocation_unit}{spread}) exceed {device.registers_per_sm} registers per SM")
    shared = model.shared_memory_for(launch.block)
    if shared > device.shared_memory_limit_per_block_bytes:
        return f"{shared} B shared memory exceed {device.name}'s {device.shared_memory_limit_per_block_bytes} B per block"
    return None


def grid_limit_broken(model, launch: LaunchConfig, limits: GridLimits) -> str | None:
    """Why the launch grid of `launch` exceeds the runtime's `limits`, or None."""
    grid = launch.grid(tuple(-(-n // f) for n, f in zip(model.work_items, launch.fold)))
    for axis, blocks, limit in zip("xyz", grid, limits.max_blocks):
        if blocks > limit:
            return f"the grid needs {blocks} blocks along {axis}, more than {limits.runtime}'s limit of {limit}"
    for axis, blocks, b, limit in zip("xyz", grid, launch.block, limits.max_threads or ()):
        if blocks * b > limit:
            return (f"the grid needs {blocks * b} threads along {axis}, more than {limits.runtime}'s limit of "
                    f"{limit} per dimension")
    return None
