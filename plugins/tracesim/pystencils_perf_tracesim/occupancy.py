"""Active work groups per SM, Wang et al.'s Eqs. 1-7 (W1-W7), with the allocation granularities they name.

The simulator itself takes blocks per SM from the core (`pystencils_perf.estimate.volumes.occupancy`);
this is the paper's own rule, for the GPUs it was validated on (Kepler, Maxwell), whose
occupancy-calculator limits the core's device files do not describe (warp and shared-memory
allocation granularities, registers per work group). `OccupancyLimits.of_device` maps a core
device onto it (granularities 1, which is the core's rule), and the tests check that both agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from pystencils_perf.errors import ConfigurationError


def _ceil_to(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _floor_to(x: int, unit: int) -> int:
    return x // unit * unit


@dataclass(frozen=True)
class OccupancyLimits:
    """Table II items 5-14 and 17 (names as in the paper)."""

    wg_per_sm: int  # B_wg_SM
    warps_per_sm: int  # B_warp_SM
    registers_per_work_item: int  # B_reg_wi
    registers_per_sm: int  # B_reg_SM
    registers_per_wg: int  # B_reg_wg
    shared_bytes_per_wg: int  # B_sm_wg
    shared_bytes_per_sm: int  # B_sm_SM
    shared_granularity_bytes: int  # G_sm
    register_granularity: int  # G_reg
    warp_granularity: int  # G_warp
    warp_size: int = 32  # T_warp

    @staticmethod
    def of_device(device) -> OccupancyLimits:
        """A core device's limits: the warp granularity is its register files (`Device.register_file_partitions`, 4 on
        NVIDIA: registers fit per file, as the occupancy calculator's warp allocation unit of 4 says); its files give no
        shared-memory granularity, so that is 1."""
        return OccupancyLimits(
            wg_per_sm=device.max_blocks_per_sm,
            warps_per_sm=device.max_threads_per_sm // device.warp_size,
            registers_per_work_item=device.max_registers_per_thread,
            registers_per_sm=device.registers_per_sm,
            registers_per_wg=device.registers_per_sm,
            shared_bytes_per_wg=device.shared_memory_limit_per_block_bytes,
            shared_bytes_per_sm=device.shared_memory_per_sm_bytes,
            shared_granularity_bytes=1,
            register_granularity=device.register_allocation_unit,
            warp_granularity=device.register_file_partitions,
            warp_size=device.warp_size,
        )


#: NVIDIA occupancy calculator, compute capability 3.0 (SEED_MODELS.md 2(d)): 16 WG/SM, 64 warps, 63 registers per
#: thread, 64 K registers, 48 KB shared memory, units 256 registers / 256 B / 4 warps
KEPLER_CC30 = OccupancyLimits(16, 64, 63, 65536, 65536, 49152, 49152, 256, 256, 4)
#: compute capability 5.0: 32 WG/SM and 64 KB shared memory per SM, otherwise as Kepler
MAXWELL_CC50 = OccupancyLimits(32, 64, 255, 65536, 65536, 49152, 65536, 256, 256, 4)


@dataclass(frozen=True)
class ActiveWorkGroups:
    """N_awg (Eq. 7) and the three limits it is the minimum of."""

    active: int
    by_architecture: int  # Eq. 1
    by_registers: int  # Eq. 3
    by_shared_memory: int  # Eq. 5


def active_work_groups(
    limits: OccupancyLimits, work_items_per_wg: int, registers_per_work_item: int, shared_bytes_per_wg: int = 0
) -> ActiveWorkGroups:
    """Eqs. 1-7 of Wang et al. for one work-group size, register count and shared-memory use."""
    if work_items_per_wg < 1 or registers_per_work_item < 0 or shared_bytes_per_wg < 0:
        raise ConfigurationError(
            f"occupancy needs a positive work-group size and non-negative registers and shared memory, got "
            f"{work_items_per_wg}, {registers_per_work_item}, {shared_bytes_per_wg}"
        )
    warps_per_wg = -(-work_items_per_wg // limits.warp_size)  # Eq. 2
    by_arch = min(limits.wg_per_sm, limits.warps_per_sm // warps_per_wg)  # Eq. 1
    if registers_per_work_item > limits.registers_per_work_item:  # Eq. 3
        by_regs = 0
    elif registers_per_work_item == 0:
        by_regs = limits.wg_per_sm
    else:
        per_warp = _ceil_to(registers_per_work_item * limits.warp_size, limits.register_granularity)
        warp_limit = _floor_to(limits.registers_per_wg // per_warp, limits.warp_granularity)  # Eq. 4
        by_regs = warp_limit // warps_per_wg * (limits.registers_per_sm // limits.registers_per_wg)
    allocated = _ceil_to(shared_bytes_per_wg, limits.shared_granularity_bytes)  # Eq. 6
    if allocated == 0:  # the implementation guard of SEED_MODELS.md W5
        by_shared = limits.wg_per_sm
    elif allocated > limits.shared_bytes_per_wg:
        by_shared = 0
    else:
        by_shared = limits.shared_bytes_per_sm // allocated  # Eq. 5
    return ActiveWorkGroups(min(by_arch, by_regs, by_shared), by_arch, by_regs, by_shared)
