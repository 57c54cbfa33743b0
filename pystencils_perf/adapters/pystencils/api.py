"""`create_kernel`: pystencils' ``create_kernel`` with the launch configuration chosen for a device.

The choice intercepts pystencils' lowering: the kernel is generated, its lowered
AST harvested, every candidate folding generated and compiled with the device vendor's
compiler for its registers (nvcc or NVRTC for NVIDIA, hipcc for AMD, where one is
installed), the candidates ranked for the device, the `perf_select` plugins
choose, and the `perf_apply` plugins regenerate the kernel with the chosen block
size and folding. What was chosen and the whole ranking stay in
``kernel.metadata["pystencils_perf"]`` (a `KernelChoice`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace

from ...devices import Device, get_device
from ...errors import ConfigurationError
from ...launch import DEFAULT_DEVICE, DEFAULT_MODEL, Layout, LaunchConfig, RankOptions
from ...plugins import get_plugin_manager
from ...rank import rank
from ...ranking import RankedCandidate, Ranking
from ...resources import ResourceUsage
from ...tune.tuner import TuneResult
from ..compilers import toolchain_for
from .apply import ApplyOptions
from .folding import create_folded_kernel
from .targets import gpu_config
from .tuning import tune_on_gpu

METADATA_KEY = "pystencils_perf"


@dataclass(frozen=True)
class KernelChoice:
    """The launch chosen for one kernel on one device, the ranking it came from, and each fold's registers."""

    device: Device
    chosen: RankedCandidate
    ranking: Ranking
    resources: dict[tuple[int, int, int], ResourceUsage] = field(default_factory=dict)
    #: what `create_kernel(..., tune=N)` measured (None: the model's choice, nothing measured)
    tuning: TuneResult | None = None
    #: whether the folds were to be compiled for their registers (`create_kernel`'s nvcc)
    compiled: bool = True

    @property
    def launch(self) -> LaunchConfig:
        return self.chosen.launch

    def report(self, head: int = 8) -> str:
        """The summary, then the best `head` candidates of the ranking and how many were rejected."""
        table = replace(self.ranking, rejected=[]).table(head=head)
        rejected = f"\n  {len(self.ranking.rejected)} candidates rejected" if self.ranking.rejected else ""
        measured = f"\nmeasured on the GPU:\n{self.tuning.table()}" if self.tuning else ""
        return f"{self.summary()}\n{table}{rejected}{measured}"

    def summary(self) -> str:
        """One line: block, fold, predicted throughput and limiter, registers."""
        c = self.chosen
        usage = self.resources.get(c.launch.fold)
        compilers = toolchain.names if (toolchain := toolchain_for(self.device)) else "compiler"
        unmeasured = f"no {compilers}" if self.compiled else "nvcc=False"
        registers = str(usage) if usage else f"registers not measured ({unmeasured})"
        measured = (
            f", {self.tuning.best_ms:.4f} ms measured (best of {len(self.tuning.record.measured)})"
            if self.tuning
            else ""
        )
        return (
            f"{self.ranking.kernel} on {self.device.name}: block {'x'.join(map(str, c.launch.block))}, "
            f"fold {'x'.join(map(str, c.launch.fold))}, {c.prediction.glups:.2f} GLup/s predicted "
            f"({c.prediction.limiter}-bound){measured}, {registers}"
        )


def create_kernel(
    assignments,
    config=None,
    *,
    device=DEFAULT_DEVICE,
    threads: int | None = None,
    blocks=None,
    folds=None,
    backend: str = "auto",
    align: str = "base",
    domain_shape=None,
    model: str = DEFAULT_MODEL,
    prune=(),
    nvcc: bool = True,
    tune: int = 0,
):
    """Generate a pystencils ``GpuKernel`` with the block size and thread folding best for a device.

    Takes what ``pystencils.create_kernel`` takes, plus the device. The kernel is
    generated, its lowered AST harvested, every candidate folding generated and compiled
    for its registers (with nvcc or NVRTC for NVIDIA, hipcc for AMD, where one is installed),
    the candidates ranked (`rank`), the `perf_select` plugins choose (`select`), and the `perf_apply` plugins
    regenerate the kernel with the chosen block size and folding.

    Parameters
    ----------
    assignments : AssignmentCollection or list of Assignment
        What ``pystencils.create_kernel`` takes.
    config : pystencils.CreateKernelConfig, optional
        Copied, its target set to the device's: ``Target.CUDA`` for an NVIDIA GPU, ``Target.HIP``
        for an AMD GPU (the other one is refused).
    device : str, path or Device, default `launch.DEFAULT_DEVICE` ("A100")
        Library name or alias, or a device file (see ``pystencils-perf devices``).
    threads : int, optional
        Threads per block of the candidate blocks (default 1024 for stencils, 512 for
        LBM kernels).
    blocks : sequence of (int, int, int), optional
        Explicit candidate blocks ``[(bx, by, bz), ...]``.
    folds : sequence of (int, int, int), optional
        Candidate foldings ``[(fx, fy, fz), ...]``; default (1, 1, 1), (1, 2, 1), (1, 1, 2).
    backend, align, domain_shape, model, prune
        As for `rank`.
    nvcc : bool, default True
        Compile every candidate fold for its registers where the vendor's compiler is
        installed (nvcc or NVRTC; hipcc for AMD GPUs); False assumes the occupancy from the
        threads per block.
    tune : int, default 0
        Measure up to this many candidates on this machine's GPU, in the model's order
        corrected by each measurement, and take the fastest measured (0: the model's
        choice, nothing measured). The measurements are kept on disk
        (`pystencils_perf.tune.record`), so a second call measures nothing; what was
        measured is printed to stderr and kept in ``KernelChoice.tuning``.

    Returns
    -------
    pystencils GpuKernel
        An ordinary pystencils kernel (``Target.CUDA``, or ``Target.HIP`` for an AMD device, with
        the chosen block as its ``__launch_bounds__``): its launch configuration carries
        the chosen block size, its code the chosen folding (each thread updates
        ``fx*fy*fz`` consecutive points). ``kernel.metadata["pystencils_perf"]`` is the
        `KernelChoice`: the chosen candidate, the whole ranking and each fold's
        registers; ``kernel.compile()`` gives the cupy-callable kernel.

    Raises
    ------
    DeviceError, HarvestError, ConfigurationError, PerfError
        As for `rank`.

    See Also
    --------
    create_lb_kernel : the same for lbmpy's update rule.
    rank : the ranking alone, for any kernel an adapter recognises.

    Examples
    --------
    >>> import pystencils as ps
    >>> import pystencils_perf as pp
    >>> src, dst = ps.fields("src, dst: double[258, 258, 258]")
    >>> update = ps.Assignment(dst[0, 0, 0], (src[1, 0, 0] + src[-1, 0, 0]) / 2)
    >>> kernel = pp.create_kernel([update], device="H100")  # doctest: +SKIP
    >>> kernel.get_launch_configuration().evaluate()  # (block, grid)  # doctest: +SKIP
    >>> print(kernel.metadata["pystencils_perf"].report(head=3))  # doctest: +SKIP
    """
    if not isinstance(tune, int) or isinstance(tune, bool) or tune < 0:
        raise ConfigurationError(f"tune must be a number of measurements (0 or more), got {tune!r}")
    options = RankOptions.of(threads, blocks, folds, backend, model, prune)
    layout = Layout(domain_shape, align)
    dev = get_device(device)
    cfg = gpu_config(config, dev)
    recipe = ApplyOptions(assignments, cfg)
    kernel = create_folded_kernel(assignments, cfg)
    choice = choose_launch(kernel, recipe, dev, options, layout, nvcc=nvcc)
    if tune:
        result = tune_on_gpu(kernel, recipe, choice.ranking, budget=tune, layout=layout)
        if result.measured_now:  # what was measured, once: a call answered from the record stays quiet
            print(f"{choice.ranking.kernel} on this machine's GPU:\n{result.table()}", file=sys.stderr)
        measured_best = next(c for c in choice.ranking.candidates if c.launch == result.best.launch)
        choice = replace(choice, chosen=measured_best, tuning=result)
    chosen = get_plugin_manager().hook.perf_apply(kernel=kernel, launch=choice.launch, options=recipe)
    chosen.metadata[METADATA_KEY] = choice
    return chosen


def choose_launch(
    kernel, recipe: ApplyOptions, device: Device, options: RankOptions, layout: Layout, *, nvcc=True
) -> KernelChoice:
    """Rank `kernel`'s candidates (each fold's registers from `recipe` through `perf_resources`) and select; the
    estimates are kept on disk for the next call with the same kernel (`estimate_store`)."""
    ranking = rank(
        kernel,
        device,
        options=options,
        layout=layout,
        recipe=recipe,
        compile_resources=nvcc,
        remember=True,
    )
    return KernelChoice(device, ranking.pick, ranking, ranking.resources, compiled=nvcc)  # rank asked the plugins
