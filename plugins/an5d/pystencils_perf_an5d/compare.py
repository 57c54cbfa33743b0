"""Would temporal blocking pay? AN5D's best prediction against `pystencils_perf.rank`'s best kernel.

Both sides count GFLOP/s with the same FLOP per cell (the stencil's own count), so
the ratio is one of time per time step. `rank` predicts one sweep per kernel call
(no temporal blocking) on the core device library's numbers; AN5D uses its own
measured bandwidths (paper Table 4).
"""

from __future__ import annotations

from dataclasses import dataclass

from .devices import get_an5d_device
from .model import Prediction
from .search import search
from .stencil import PAPER_ITERATIONS, Problem, problem_from_assignments


@dataclass(frozen=True)
class Comparison:
    problem: Problem
    device: str
    an5d: Prediction
    rank_block: tuple[int, int, int]
    rank_fold: tuple[int, int, int]
    rank_glups: float
    rank_limiter: str

    @property
    def rank_gflops(self) -> float:
        return self.rank_glups * self.problem.stencil.flops_per_cell

    @property
    def speedup(self) -> float:
        """AN5D's predicted GFLOP/s over rank's best."""
        return self.an5d.gflops / self.rank_gflops

    def report(self) -> str:
        s = self.problem.stencil
        verdict = f"would pay x{self.speedup:.1f}" if self.speedup > 1 else f"would not pay (x{self.speedup:.2f})"
        return "\n".join(
            [
                (
                    f"{s.name} ({s.shape}, radius {s.radius}, {s.dims}D, {self.problem.precision}, "
                    f"{self.problem.size}^{s.dims} cells, {s.flops_per_cell} FLOP/cell) on {self.device}:"
                ),
                f"  AN5D best     {self.an5d.config.label():<28} {self.an5d.gflops:9.1f} GFLOP/s ({self.an5d.bottleneck}-bound)",
                (
                    f"  rank best     block {'x'.join(map(str, self.rank_block))} fold {'x'.join(map(str, self.rank_fold)):<13}"
                    f" {self.rank_gflops:9.1f} GFLOP/s ({self.rank_glups:.2f} GLup/s, {self.rank_limiter}-bound)"
                ),
                f"  temporal blocking {verdict}",
            ]
        )


def compare(
    assignments,
    device: str,
    *,
    size: int | None = None,
    iterations: int = PAPER_ITERATIONS,
    paper_exact: bool = True,
    **rank_options,
) -> Comparison:
    """AN5D's best configuration (artifact search space) against `pystencils_perf.rank(assignments, device)`'s best.

    `size` (cells per dimension) defaults to the fields' interior; `rank_options`
    go to `rank` (threads=, blocks=, folds=, ...).
    """
    import pystencils_perf

    problem = problem_from_assignments(assignments, size=size, iterations=iterations)
    an5d_device = get_an5d_device(device)
    best_an5d = search(problem, an5d_device, paper_exact=paper_exact)[0]
    best_rank = pystencils_perf.rank(assignments, device, **rank_options).best
    return Comparison(
        problem=problem,
        device=an5d_device.name,
        an5d=best_an5d,
        rank_block=tuple(best_rank.launch.block),
        rank_fold=tuple(best_rank.launch.fold),
        rank_glups=best_rank.prediction.glups,
        rank_limiter=best_rank.prediction.limiter,
    )
