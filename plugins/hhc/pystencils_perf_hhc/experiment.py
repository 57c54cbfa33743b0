"""The paper's experiment set (PPoPP'17 sec. 5, 5.1), as lists its counts are computed from.

Benchmarks and GPUs come from the device data (Table 4 names the benchmarks, its
columns the GPUs). The 85 tile-size combinations and 10 thread counts per
experiment are given only as counts in the paper, not as lists.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from pystencils_perf.devices import Device

from .devices import hhc_parameters, parameters_of
from .model import Problem
from .stencil import paper_stencil

#: sec. 5: S in {4096^2, 8192^2} x T in {1024, ..., 16384}; S in {384^3, 512^3, 640^3} x T in {128, ..., 640}, T <= S
SPACE_SIZES = {2: (4096, 8192), 3: (384, 512, 640)}
TIME_STEPS = {2: (1024, 2048, 4096, 8192, 16384), 3: (128, 256, 384, 512, 640)}
#: sec. 5.1: "85 unique tile size combinations per experiment ... 10 different values of n_thr"
TILE_COMBINATIONS_PER_EXPERIMENT = 85
THREAD_COUNTS_PER_TILE = 10


def problems(dims: int) -> list[Problem]:
    """The problem sizes of sec. 5; 3D keeps T <= S."""
    return [
        Problem((s,) * dims, t)
        for s, t in itertools.product(SPACE_SIZES[dims], TIME_STEPS[dims])
        if dims == 2 or t <= s
    ]


@dataclass(frozen=True)
class ExperimentSet:
    devices: tuple[Device, ...] = field(default_factory=lambda: tuple(p.device for p in hhc_parameters().values()))

    def benchmarks(self, dims: int) -> list[str]:
        """Table 4's benchmarks of that dimensionality (on every GPU)."""
        names = set.intersection(*(set(parameters_of(d).c_iter_seconds) for d in self.devices))
        return sorted(n for n in names if paper_stencil(n).dims == dims)

    def experiments(self, dims: int) -> int:
        """Benchmark x problem size x GPU combinations: 80 for 2D, 48 for 3D."""
        return len(self.benchmarks(dims)) * len(problems(dims)) * len(self.devices)

    @property
    def points_per_experiment(self) -> int:
        """850 data points (tile combination x n_thr) per experiment."""
        return TILE_COMBINATIONS_PER_EXPERIMENT * THREAD_COUNTS_PER_TILE

    @property
    def programs(self) -> int:
        """850 x (80 + 48) = 108,800 generated programs."""
        return self.points_per_experiment * (self.experiments(2) + self.experiments(3))
