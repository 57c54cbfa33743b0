"""The paper's Table 5 (configurations, measured and predicted GFLOP/s) as data, from ``data/table5.csv``."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from .model import Config
from .stencil import Problem, benchmark, paper_problem

DATA_FILE = Path(__file__).parent / "data" / "table5.csv"


@dataclass(frozen=True)
class Table5Entry:
    """One Table 5 cell group: the tuned configuration and what the paper printed for it."""

    stencil: str
    gpu: str
    precision: str
    config: Config
    register_limit: int | None
    tuned_gflops: float
    model_gflops: float
    bottleneck: str  # recomputed from the authors' spreadsheets (SEED_MODELS.md 4(d)), not printed in the paper

    @property
    def problem(self) -> Problem:
        return paper_problem(benchmark(self.stencil), self.precision)


def table5_entries() -> list[Table5Entry]:
    """The 84 entries in Table 5's order: stencils by row, then V100/P100 x float/double."""
    with open(DATA_FILE, newline="") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return [
        Table5Entry(
            stencil=row["stencil"],
            gpu=row["gpu"],
            precision=row["precision"],
            config=Config(int(row["bT"]), tuple(int(b) for b in row["bS"].split("x")), int(row["hSN"])),
            register_limit=None if row["regs"] == "-" else int(row["regs"]),
            tuned_gflops=float(row["tuned_gflops"]),
            model_gflops=float(row["model_gflops"]),
            bottleneck=row["bottleneck"],
        )
        for row in rows
    ]
