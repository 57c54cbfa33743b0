"""The built-in `candidates` plugin: the default candidate space (powers-of-two blocks of the default thread count,
times the default folds) and the checks that reject what a device cannot run or would run with idle threads."""

from __future__ import annotations

import itertools

from .errors import ConfigurationError
from .hookspecs import hookimpl
from .launch import LaunchConfig, grid_limits
from .vendors import GridLimits, vendor_of

DEFAULT_FOLDS = ((1, 1, 1), (1, 2, 1), (1, 1, 2))


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
    if launch.fold != (1, 1, 1) and (why := model.why_not_foldable()):
        return why
    for axis, n, f in zip("xyz", model.work_items, launch.fold):
        if f > n:
            return f"fold {axis} = {f} exceeds the {n} point(s) of the iteration space along {axis}: folded points would idle"
    for axis, b, n, f in zip("xyz", launch.block, model.work_items, launch.fold):
        threads = -(-n // f)
        if b > threads:
            return (
                f"block {axis} = {b} exceeds the {threads} threads of the (folded) iteration space: threads would idle"
            )
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
            return (
                f"occupancy 0: {regs} registers x {warps} warps ({per_warp} per warp, allocated in units of "
                f"{device.register_allocation_unit}{spread}) exceed {device.registers_per_sm} registers per SM"
            )
    model.shared_arrays_for(launch.block)  # a description that declares no array for this block is an error
    shared = model.shared_memory_for(launch.block)
    static_limit = vendor_of(device).static_shared_memory_limit_bytes
    if model.shared_memory_is_static and shared > static_limit:
        return (
            f"{shared} B of statically sized shared arrays exceed the {static_limit} B a block's static shared memory "
            "may take (only dynamic shared memory may be larger)"
        )
    if shared > device.shared_memory_limit_per_block_bytes:
        return (
            f"{shared} B shared memory exceed {device.name}'s {device.shared_memory_limit_per_block_bytes} B per block"
        )
    return None


def grid_limit_broken(model, launch: LaunchConfig, limits: GridLimits) -> str | None:
    """Why the launch grid of `launch` exceeds the runtime's `limits`, or None."""
    grid = launch.grid(tuple(-(-n // f) for n, f in zip(model.work_items, launch.fold)))
    for axis, blocks, limit in zip("xyz", grid, limits.max_blocks):
        if blocks > limit:
            return f"the grid needs {blocks} blocks along {axis}, more than {limits.runtime}'s limit of {limit}"
    for axis, blocks, b, limit in zip("xyz", grid, launch.block, limits.max_threads or ()):
        if blocks * b > limit:
            return (
                f"the grid needs {blocks * b} threads along {axis}, more than {limits.runtime}'s limit of "
                f"{limit} per dimension"
            )
    return None
