"""AN5D's configuration search (paper sec. 6.3): predict every configuration, prune, keep the top 5.

Two spaces (A17). ``"paper"`` is the text's: 2D b_T 1..16 x b_S {128, 256, 512} x
h_SN {256, 512, 1024} = 144, 3D b_T 1..8 x b_S {16x16, 32x16, 32x32, 64x16} x
h_SN {128, 256} = 64. ``"artifact"`` is what the authors' spreadsheets swept (sheet
"Parameter Sweep"): 2D also h_SN = 128 (192), which Table 5 contains
(star2d2r/V100/double), so it is the default.
"""

from __future__ import annotations

import itertools

from pystencils_perf.devices import Device

from .devices import get_an5d_device
from .errors import An5dParameterError
from .model import Config, Prediction, config_error, predict, sm_efficiency
from .stencil import Problem

SPACES = ("paper", "artifact")
TOP = 5

_TEMPORAL_DEGREES = {2: range(1, 17), 3: range(1, 9)}
_SPATIAL_BLOCKS = {2: [(128,), (256,), (512,)], 3: [(16, 16), (32, 16), (32, 32), (64, 16)]}
_STREAM_BLOCKS = {
    ("paper", 2): (256, 512, 1024),
    ("artifact", 2): (128, 256, 512, 1024),
    ("paper", 3): (128, 256),
    ("artifact", 3): (128, 256),
}


def search_space(dims: int, space: str = "artifact") -> list[Config]:
    """Every configuration of A17 for a `dims`-dimensional stencil, before validity and register pruning."""
    if space not in SPACES:
        raise An5dParameterError(f"search space {space!r}: choose one of {', '.join(SPACES)}")
    if dims not in _TEMPORAL_DEGREES:
        raise An5dParameterError(f"{dims} dimensions: AN5D's search space covers 2D and 3D stencils")
    return [
        Config(b_t, b_s, h_sn)
        for b_t, b_s, h_sn in itertools.product(
            _TEMPORAL_DEGREES[dims], _SPATIAL_BLOCKS[dims], _STREAM_BLOCKS[space, dims]
        )
    ]


def registers_per_thread(b_t: int, radius: int, precision: str) -> int:
    """A14 (sec. 6.3): AN5D's empirical register count of its generated code (NVCC 10)."""
    if precision == "float":
        return b_t * (2 * radius + 1) + b_t + 20
    return 2 * b_t * (2 * radius + 1) + b_t + 30


def fits_registers(problem: Problem, config: Config, device: Device) -> bool:
    """A14's pruning: at most 255 registers per thread and 65,536 per block."""
    registers = registers_per_thread(config.b_t, problem.stencil.radius, problem.precision)
    return (
        registers <= device.max_registers_per_thread and registers * config.threads_per_block <= device.registers_per_sm
    )


def _runs(problem: Problem, config: Config, device: Device, paper_exact: bool) -> bool:
    """A17's validity (compute region left, b_S1 >= b_S2), A14, and at least one full wave (A11)."""
    return (
        config_error(problem, config) is None
        and list(config.b_s) == sorted(config.b_s, reverse=True)
        and fits_registers(problem, config, device)
        and sm_efficiency(problem, config, device, paper_exact=paper_exact) > 0
    )


def search(
    problem: Problem, device: str | Device, *, space: str = "artifact", top: int = TOP, paper_exact: bool = True
) -> list[Prediction]:
    """The `top` configurations by predicted GFLOP/s, best first (ties: smaller b_T, b_S, h_SN first)."""
    device = get_an5d_device(device)
    predictions = [
        predict(problem, device, config, paper_exact=paper_exact)
        for config in search_space(problem.stencil.dims, space)
        if _runs(problem, config, device, paper_exact)
    ]
    if not predictions:
        raise An5dParameterError(
            f"no configuration of AN5D's {space} space runs {problem.stencil.name} of size {problem.size} on {device.name}"
        )
    predictions.sort(key=lambda p: (-p.gflops, p.config.b_t, p.config.b_s, p.config.h_sn))
    return predictions[:top]
