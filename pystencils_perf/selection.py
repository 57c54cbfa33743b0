"""The built-in selection plugin (`perf_select`): among the candidates the model cannot tell apart, the one with
the fewest idle lanes, then the most resident warps, then the least L2 load traffic (`TIE_BREAK`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .hookspecs import hookimpl

if TYPE_CHECKING:
    from .rank import RankedCandidate

#: how `select` orders candidates the model cannot tell apart (documented in docs/model/index.md)
TIE_BREAK = (
    "fewest idle lanes in partly filled warps, then most resident warps per SM, then least L2 load traffic "
    "(a squarer footprint), then predicted throughput"
)


def idle_lanes(launch, warp_size: int) -> int:
    """SIMT lanes a block leaves idle in its last, partly filled warp (a 57-thread block: 7 of 64)."""
    return -launch.threads_per_block % warp_size


def tie_break(tied: list[RankedCandidate], warp_size: int) -> RankedCandidate:
    """The tied candidate the default selection takes (`TIE_BREAK`).

    Idle lanes are hardware a block holds and does not use, whatever the model predicts for a
    memory-bound kernel; more resident warps hide latency the model may misjudge; less L1 -> L2
    traffic is what a squarer block footprint buys, and it is robust to the capacity curves'
    error. Registers count only through the occupancy they allow: fewer registers at the same
    occupancy took unfolded launches on Hopper where folded ones ran faster (docs/model/index.md,
    "Ties and the selection").
    """

    def key(c: RankedCandidate):
        m = c.metrics
        resident_warps = m.blocks_per_sm * -(-c.launch.threads_per_block // warp_size)
        return (
            idle_lanes(c.launch, warp_size),
            -resident_warps,
            round(m.l2_load_bytes_per_lup, 6),
            -c.prediction.lups_per_second,
            c.launch,
        )

    return min(tied, key=key)


@hookimpl(trylast=True)
def perf_select(ranking):
    return tie_break(ranking.tied, ranking.device.warp_size)
