"""The built-in selection plugin (`perf_select`): among the candidates the model cannot tell apart, the one with
the fewest idle lanes, then the most resident warps, then the least L2 load traffic (`TIE_BREAK`)."""

from __future__ import annotations

from .hookspecs import hookimpl
from .ranking import tie_break


@hookimpl(trylast=True)
def perf_select(ranking):
    return tie_break(ranking.tied, ranking.device.warp_size)
