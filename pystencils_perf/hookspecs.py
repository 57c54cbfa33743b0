"""Every hook of pystencils-perf, documented (pluggy project name ``pystencils_perf``).

One hook per decision. Built-in plugins (the pystencils adapter, the default
candidate space, the estimator, the limiter model, the default selection) are
registered exactly like external ones: through the ``pystencils_perf``
entry-point group of their distribution. A plugin is any module or object with
functions decorated by `hookimpl` and named like the specs below; a function
whose name starts with ``perf_`` but matches no spec is an error when the
plugin manager is built (`pystencils_perf.plugins`), as in pytest. The order in
which one ranking calls them is shown in docs/model/index.md ("From a kernel to
a ranking").
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .devices import Device
    from .kernel import HarvestOptions, KernelModel
    from .launch import LaunchConfig, RankOptions
    from .metrics import Metrics
    from .predict import Prediction
    from .ranking import RankedCandidate, Ranking
    from .resources import ResourceUsage

PROJECT_NAME = "pystencils_perf"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def perf_harvest(kernel: Any, options: HarvestOptions) -> KernelModel | None:
    """Describe a generator's kernel object as a `KernelModel`.

    :param kernel: whatever the user passed (a pystencils ``GpuKernel``, a loopy
        kernel, a declarative description, ...).
    :param options: domain shape for variable-size fields, alignment.
    :return: a `KernelModel`, or None if this adapter does not recognise `kernel`.
        Raise `HarvestError` if it recognises the kernel but cannot describe it.
    """


@hookspec(firstresult=True)
def perf_load_spec(path: str) -> dict[str, Any] | None:
    """Read a SPEC file that is not Python (a TOML description, say).

    :return: the names a Python SPEC would define (``kernel``, ``domain_shape``; for Kernel Tuner
        data ``kernel_for``, ``lattice_updates``, ``fixed_parameters``, ``block_parameters``),
        or None if this plugin does not read `path`. Raise `PerfError` naming what is wrong.
    """


@hookspec(firstresult=True)
def perf_resources(
    kernel: Any, recipe: Any, model: KernelModel, folds: list[tuple[int, int, int]], device: Device
) -> dict[tuple[int, int, int], ResourceUsage] | None:
    """Registers, spills and shared memory of the kernel's compiled code, per fold, for `device`.

    :param kernel: what the user passed (the adapter recognises its own kernels).
    :param recipe: what the adapter regenerates folded variants from (its `perf_apply`
        options), or None; without one, only the kernel's own fold can be compiled.
    :return: resources by fold (folds it cannot compile left out), or None if this
        plugin cannot compile `kernel` for `device` (no compiler, another generator).
        Without any answer occupancy follows from the thread count alone, and the
        ranking says so.
    """


@hookspec(firstresult=True)
def perf_launch_resources(
    kernel: Any, model: KernelModel, launches: list[LaunchConfig], device: Device
) -> dict[LaunchConfig, ResourceUsage] | None:
    """Registers, spills and shared memory of the code each launch runs, for kernels whose code depends on
    the block size: Kernel Tuner's kernels take it as macros (``-Dblock_size_x=...``), so every block size
    is another compilation, with its own registers (nvcc may hoist the loads of an unrolled tile into
    registers for one block size and not for another).

    :param launches: the candidates that passed the checks so far; where a tuner compiles in the model's order
        (`tune.replay.spec_candidates`' ``compile_until_certain``) a few of them at a time, the fastest first.
    :return: resources by launch (launches it cannot compile left out), or None if this plugin cannot
        compile `kernel` per launch. Asked after `perf_resources`; where both answer, a launch's own
        count is used; its shared memory, where it is more than the description's, sets that launch's
        occupancy.
    """


@hookspec(firstresult=True)
def perf_resources_unavailable(kernel: Any, device: Device) -> str | None:
    """Why `perf_resources` compiles nothing of a kernel this plugin recognises, for the ranking's note that
    occupancy is assumed: without it the note could only blame a missing compiler.

    :return: one short clause naming the kernel and the reason (code for another target, a description
        without source), or None where the kernel is not this plugin's or could be compiled.
    """


@hookspec
def perf_candidates(model: KernelModel, device: Device, options: RankOptions) -> list[LaunchConfig]:
    """Contribute launch candidates.

    :param options: thread counts, explicit blocks and folds the user asked for.
    :return: a list of `LaunchConfig`; the lists of all plugins are joined and
        de-duplicated in order.
    """


@hookspec
def perf_check_candidate(model: KernelModel, launch: LaunchConfig, device: Device) -> str | None:
    """Give a reason to reject a candidate (too many threads, registers, shared memory, a fold the kernel lacks).

    :return: a one-line reason, or None if this plugin has no objection.
    """


@hookspec(firstresult=True)
def perf_estimate(model: KernelModel, launch: LaunchConfig, device: Device, options: RankOptions) -> Metrics | None:
    """The hardware metrics of one candidate (the built-in estimator answers last).

    :param model: the kernel model, already folded as `launch.fold` asks.
    :return: `Metrics`, or None to leave the candidate to the next estimator.
    """


@hookspec
def perf_estimate_extras(
    model: KernelModel, launch: LaunchConfig, device: Device, options: RankOptions, metrics: Metrics
) -> dict[str, float] | None:
    """Contribute further numbers of one candidate, kept in ``metrics.extras``.

    :return: names (with units) to values; the dicts of all plugins are merged,
        a name given twice is an error.
    """


@hookspec(firstresult=True)
def perf_predict(
    model: KernelModel, launch: LaunchConfig, device: Device, metrics: Metrics, options: RankOptions
) -> Prediction | None:
    """Turn metrics into a `Prediction` (throughput, the time of every limiter, the limiter).

    Performance models are opt-in by name: answer only when ``options.model``
    is one of your `perf_models` names, else return None. The built-in models
    are ``"throughput"`` (the default, `launch.DEFAULT_MODEL`) and ``"limiters"``.
    """


@hookspec
def perf_models() -> dict[str, str]:
    """The performance models this plugin answers `perf_predict` for: name -> one-line description.

    The command line lists them in ``--help`` and refuses a misspelt name with the list of known ones."""


@hookspec
def perf_prune(
    model: KernelModel, device: Device, candidates: list[RankedCandidate], options: RankOptions
) -> list[tuple[RankedCandidate, str]] | None:
    """Drop ranked candidates, as a filter the user asked for by name.

    :param candidates: the ranked candidates, best first.
    :return: None unless one of your `perf_prune_filters` names is in
        ``options.prune``; else the candidates to drop, each with its reason.
        The core moves them into ``ranking.rejected``.
    """


@hookspec
def perf_prune_filters() -> dict[str, str]:
    """The candidate filters this plugin answers `perf_prune` for: name -> one-line description.

    The command line lists them in ``--help`` and refuses a misspelt name with the list of known ones."""


@hookspec
def perf_footprint_backends() -> dict[str, Any]:
    """Footprint backends by name: modules or objects with ``touched``, ``count_union``, ``count_overlap`` and
    ``count_points`` (as `estimate.footprint_enum`), and optionally ``touched_sets`` (``touched`` of several
    thread sets of one launch at once, which the estimator asks for a candidate's waves).

    The built-in estimator offers ``"enum"`` and ``"isl"``; ``"auto"`` is enumeration.
    """


@hookspec
def perf_addoption(parser: argparse.ArgumentParser) -> None:
    """Add command-line options to ``pystencils-perf rank`` (like pytest's ``pytest_addoption``).

    Their parsed values reach the plugins as ``options.plugin_options[dest]``.
    Name them after the plugin (``--tracesim-latency``) to avoid clashes.
    """


@hookspec(firstresult=True)
def perf_select(ranking: Ranking) -> RankedCandidate:
    """Choose the candidate handed back to the generator from a `Ranking` (best first)."""


@hookspec(firstresult=True)
def perf_apply(kernel: Any, launch: LaunchConfig, options: Any) -> Any:
    """Apply a chosen `LaunchConfig` to the generator's kernel object.

    :param options: adapter-specific; what the adapter needs to regenerate the
        kernel. The pystencils adapter expects `ApplyOptions(assignments, config)`,
        because a built ``GpuKernel`` cannot change its folding or block size.
    :return: the configured kernel (the same object or a regenerated one), or
        None if this adapter does not handle `kernel`.
    """
