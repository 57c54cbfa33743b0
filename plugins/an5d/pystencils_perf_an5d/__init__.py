"""AN5D's performance model for temporal blocking (Matsumura et al., CGO'20), a library beside pystencils-perf.

`predict` a configuration (b_T, b_S, h_SN) of a star or box stencil, `search` AN5D's
configuration space for the top 5, and `compare` AN5D's best with the best
non-temporally-blocked kernel `pystencils_perf.rank` predicts.
"""

from .compare import Comparison, compare
from .devices import An5dParameters, an5d_parameters, get_an5d_device, parameters_of
from .errors import An5dDeviceError, An5dError, An5dParameterError, StencilShapeError
from .model import Config, Prediction, ThreadCounts, predict, thread_counts
from .search import registers_per_thread, search, search_space
from .stencil import (
    OpMix,
    Problem,
    Stencil,
    benchmark,
    op_mix,
    paper_benchmarks,
    paper_problem,
    problem_from_assignments,
)

__all__ = [
    "An5dDeviceError",
    "An5dParameters",
    "An5dError",
    "An5dParameterError",
    "Comparison",
    "Config",
    "OpMix",
    "Prediction",
    "Problem",
    "Stencil",
    "StencilShapeError",
    "ThreadCounts",
    "an5d_parameters",
    "benchmark",
    "compare",
    "get_an5d_device",
    "op_mix",
    "paper_benchmarks",
    "paper_problem",
    "parameters_of",
    "predict",
    "problem_from_assignments",
    "registers_per_thread",
    "search",
    "search_space",
    "thread_counts",
]
