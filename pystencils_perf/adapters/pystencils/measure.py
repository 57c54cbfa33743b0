"""Measure launch candidates on a CUDA GPU: the ground truth that `validate` and `calibrate` compare with.

`measure` times every candidate that `rank` would consider (same options, same
checks) with CUDA events and returns rows of the shared data-set schema
(`dataset`); `ncu.profile` adds Nsight Compute's volume counters. Without cupy
or a GPU, both raise a `MeasurementError` that says so.

Thread folding other than (1, 1, 1) regenerates the kernel through the
`perf_apply` plugins: it needs the recipe they regenerate it from
(`apply_options`; for pystencils, given assignments instead of a generated
kernel are their own recipe). Without one, a folded candidate is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ConfigurationError
from ...launch import Layout, LaunchConfig, RankOptions
from ...measure.dataset import Measurement, kernel_record
from .gpu import GpuSession, require_cupy, run_info, runnable

#: the issue's floor: a median of fewer runs is too noisy to rank candidates by
MIN_REPEATS = 7
#: untimed launches per candidate before timing (clocks up, caches and TLB warm)
DEFAULT_WARMUP = 3


@dataclass(frozen=True)
class MeasureRun:
    """What one `measure` call did: its rows, and what re-running it under Nsight Compute needs."""

    rows: list[Measurement]
    launches: list[LaunchConfig]
    kernel_names: list[str]
    lattice_updates: int


#: what `measure` times unless told: `rank`'s default blocks, unfolded
UNFOLDED = RankOptions(folds=((1, 1, 1),))


def _session(kernel, device, options: RankOptions, layout: Layout, apply_options) -> GpuSession:
    """The GPU session for exactly the candidates `rank` accepts with these options, in launch order."""
    from ...devices import get_device
    from ...plugins import get_plugin_manager
    from ...rank import harvest, with_measured_resources

    require_cupy()  # before anything slow: fail in a second on machines without a GPU
    kernel, recipe = runnable(kernel)
    recipe = apply_options or recipe
    model = harvest(kernel, domain_shape=layout.domain_shape, align=layout.align)
    model, space, _, _ = with_measured_resources(
        get_plugin_manager(), kernel, recipe, model, get_device(device), options
    )
    return GpuSession(kernel, model, sorted(space.accepted), recipe)


def measure(
    kernel,
    device,
    options: RankOptions = UNFOLDED,
    *,
    layout: Layout = Layout(),
    apply_options=None,
    warmup: int = DEFAULT_WARMUP,
    repeats: int = MIN_REPEATS,
    progress=None,
) -> MeasureRun:
    """Time every candidate: median of `repeats` CUDA-event times after `warmup` launches.

    `options` and `layout` as for `rank`, but unfolded unless told; other foldings need `apply_options` (see the
    module docstring).
    """
    if repeats < MIN_REPEATS:
        raise ConfigurationError(f"measure needs at least {MIN_REPEATS} timed runs per candidate, got {repeats}")
    session = _session(kernel, device, options, layout, apply_options)
    info = {**run_info(session.cp), **kernel_record(session.model)}
    lups = session.model.lattice_updates
    rows = []
    for launch in progress(session.launches) if progress else session.launches:
        t = session.time(launch, warmup, repeats).median_ms
        rows.append(Measurement(launch, {"glups": lups / (t * 1e-3) / 1e9}, {**info, "time_ms": f"{t:.5f}"}))
    return MeasureRun(rows, session.launches, session.kernel_names, lups)


def launch_each_once(
    kernel, device, options: RankOptions = UNFOLDED, *, layout: Layout = Layout(), apply_options=None
) -> None:
    """The `--ncu-pass` child: every candidate once, in `measure`'s order."""
    session = _session(kernel, device, options, layout, apply_options)
    session.launch_each_once(session.launches)


__all__ = ["DEFAULT_WARMUP", "MIN_REPEATS", "MeasureRun", "launch_each_once", "measure"]
