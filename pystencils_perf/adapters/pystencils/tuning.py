"""Tuning pystencils kernels on this machine's GPU: the ranking's candidates timed with pystencils' cupy JIT.

`create_kernel(..., tune=N)`, `create_lb_kernel(..., tune=N)` and
``pystencils-perf tune SPEC`` come here; the loop, the search and the record
are `pystencils_perf.tune`'s, shared with replay. Only `GpuTimer` needs a GPU.
"""

from __future__ import annotations

from ...rank import harvest
from ...launch import Layout, LaunchConfig
from ...ranking import Ranking
from ...tune.record import RecordStore, kernel_hash, software_versions
from ...tune.tuner import Candidate, TuneResult, tune
from .gpu import GpuSession, run_info
from .measure import DEFAULT_WARMUP, MIN_REPEATS


def launch_params(launch: LaunchConfig) -> dict[str, int]:
    """A launch as tunable parameters, with Kernel Tuner's names for the block."""
    return {
        **{f"block_size_{a}": n for a, n in zip("xyz", launch.block)},
        **{f"fold_{a}": n for a, n in zip("xyz", launch.fold)},
    }


def ranking_candidates(ranking: Ranking) -> list[Candidate]:
    """The ranked launches as tuning candidates: the model's time per update is the search's prior."""
    return [
        Candidate(launch_params(c.launch), 1.0 / c.prediction.lups_per_second, c.launch) for c in ranking.candidates
    ]


class GpuTimer:
    """Times candidates on this machine's GPU: median of `repeats` CUDA-event times after `warmup` launches."""

    def __init__(
        self,
        kernel,
        model,
        launches: list[LaunchConfig],
        recipe,
        *,
        warmup: int = DEFAULT_WARMUP,
        repeats: int = MIN_REPEATS,
    ):
        self.session = GpuSession(kernel, model, launches, recipe)
        self.warmup, self.repeats = warmup, repeats

    def fingerprint(self) -> dict[str, str]:
        """The GPU, its driver and CUDA runtime as `measure` records them (`run_info`), its compute capability,
        and the software versions."""
        cp = self.session.cp
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        info = run_info(cp)
        return {
            "name": info["device"],
            "compute_capability": f"{props['major']}.{props['minor']}",
            "driver_and_runtime": info["driver"],
            **software_versions(),
        }

    def time_ms(self, candidate: Candidate) -> float:
        return self.session.time(candidate.launch, self.warmup, self.repeats).median_ms


def kernel_key(kernel, candidates: list[Candidate], layout: Layout) -> str:
    """The kernel's generated code, its layout and the candidate space: what the record is of."""
    return kernel_hash(
        kernel.get_c_code(), [c.params for c in candidates], list(layout.domain_shape or ()), layout.align
    )


def tune_on_gpu(
    kernel,
    recipe,
    ranking: Ranking,
    *,
    budget: int,
    layout: Layout = Layout(),
    store: RecordStore | None = None,
    source=None,
) -> TuneResult:
    """Measure `ranking`'s candidates of `kernel` (unfolded; `recipe` regenerates the folds) on the GPU.

    :param store: the record store (default: the user's cache directory, see `tune.record`).
    :param source: what times the candidates (default a `GpuTimer` on this machine's GPU).
    """
    candidates = ranking_candidates(ranking)
    if source is None:
        model = harvest(kernel, domain_shape=layout.domain_shape, align=layout.align)
        source = GpuTimer(kernel, model, [c.launch for c in candidates], recipe)
    return tune(
        candidates,
        source,
        budget=budget,
        kernel=kernel_key(kernel, candidates, layout),
        store=store or RecordStore(),
    )
