"""Ryoo et al.'s two static metrics (CGO'08 sec. 4, Eqs. 1 and 2; R1, R2, R4 of SEED_MODELS.md sec. 3).

Efficiency says how much work the whole launch executes, Utilization how well
the other resident warps cover a warp's blocking instructions. Larger is better
on both; only their relative values across configurations carry meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

from pystencils_perf.errors import ConfigurationError


def _positive(name: str, value, integer: bool = False) -> None:
    bad_type = (
        isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int))
    )
    if bad_type or not value > 0:
        kind = "a positive integer" if integer else "a positive number"
        raise ConfigurationError(f"{name} must be {kind}, got {value!r}")


@dataclass(frozen=True)
class RyooInputs:
    """What the two metrics need for one configuration.

    :param instructions_per_thread: dynamic instructions one thread executes (Instr).
    :param regions_per_thread: dynamic intervals between blocking instructions (barriers,
        groups of independent global loads) and kernel start/end: blocking units + 1.
    :param threads: threads of the whole launch (grid x block), idle ones included.
    :param warps_per_block: W_TB.
    :param blocks_per_sm: resident blocks per SM (B_SM) from the occupancy rules.
    """

    instructions_per_thread: float
    regions_per_thread: int
    threads: int
    warps_per_block: int
    blocks_per_sm: int

    def __post_init__(self):
        _positive("instructions per thread", self.instructions_per_thread)
        _positive("regions per thread", self.regions_per_thread, integer=True)
        _positive("threads", self.threads, integer=True)
        _positive("warps per block", self.warps_per_block, integer=True)
        _positive("blocks per SM", self.blocks_per_sm, integer=True)


@dataclass(frozen=True)
class RyooMetrics:
    efficiency: float
    utilization: float
    inputs: RyooInputs

    def describe(self) -> str:
        return f"Efficiency {self.efficiency:.4g}, Utilization {self.utilization:.4g}"


def warps_per_block(threads_per_block: int, warp_size: int = 32) -> int:
    """W_TB = ceil(threads per block / warp size) (R4)."""
    _positive("threads per block", threads_per_block, integer=True)
    return -(-threads_per_block // warp_size)


def efficiency(instructions_per_thread: float, threads: int) -> float:
    """Eq. 1: 1 / (Instr x Threads), the inverse of the launch's total dynamic instructions."""
    return 1.0 / (instructions_per_thread * threads)


def utilization(
    instructions_per_thread: float, regions_per_thread: int, warps_per_block: int, blocks_per_sm: int
) -> float:
    """Eq. 2: (Instr / Regions) x ((W_TB - 1) / 2 + (B_SM - 1) x W_TB).

    Instr / Regions is how far a warp runs before it blocks; the bracket counts the
    warps that can run meanwhile: half the others of its block (at a barrier, half of
    them are still running on average) and all warps of the other resident blocks.
    """
    return (
        instructions_per_thread
        / regions_per_thread
        * ((warps_per_block - 1) / 2 + (blocks_per_sm - 1) * warps_per_block)
    )


def ryoo_metrics(inputs: RyooInputs) -> RyooMetrics:
    return RyooMetrics(
        efficiency(inputs.instructions_per_thread, inputs.threads),
        utilization(
            inputs.instructions_per_thread, inputs.regions_per_thread, inputs.warps_per_block, inputs.blocks_per_sm
        ),
        inputs,
    )
