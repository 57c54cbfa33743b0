"""The pipeline: `rank` harvests a kernel, asks the plugins for candidates, checks, estimates and predicts each, and
`select` asks them for the pick. The one module that runs the hooks in order (`hookspecs`)."""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import TYPE_CHECKING

from .devices import get_device
from . import estimate_store
from .errors import ConfigurationError, HarvestError, NothingRunsError, PerfError
from .estimate.plugin import get_backend
from .launch import DEFAULT_DEVICE, DEFAULT_MODEL, CandidateSpace, Layout, RankOptions, check_threads, keywords_or
from .metrics import Metrics
from .parallel import can_fork, resolve_jobs, run_tasks
from .plugins import BLOCK_ENV, blocked_adapters, get_plugin_manager
from .resources import launch_resources_note, resources_note, with_launch_resources, with_resources
from .ranking import RankedCandidate, Ranking

if TYPE_CHECKING:
    from .kernel import KernelModel


def _extras(pm, model, launch, device, options, metrics: Metrics) -> Metrics:
    """`metrics` with the plugins' `perf_estimate_extras` merged in; a name given twice is an error."""
    merged: dict = {}
    for part in pm.hook.perf_estimate_extras(
        model=model, launch=launch, device=device, options=options, metrics=metrics
    ):
        clash = merged.keys() & (part or {}).keys()
        if clash:
            raise PerfError(f"candidate {launch.label}: two estimator plugins report {', '.join(sorted(clash))}")
        merged.update(part or {})
    return replace(metrics, extras={**metrics.extras, **merged}) if merged else metrics


def check_names(kind: str, asked, offered: list[dict]) -> None:
    """Refuse a model or filter name no installed plugin offers (`offered`: the answers of its listing hook)."""
    known = {name for names in offered for name in (names or {})}
    for name in asked:
        if name not in known:
            raise ConfigurationError(f"unknown {kind} {name!r}; installed: {', '.join(sorted(known)) or 'none'}")


def harvest(kernel, *, domain_shape=None, align="base", field_strides=None, base_offsets_bytes=None) -> KernelModel:
    """Describe `kernel` (a pystencils GPU kernel, assignments, or whatever an adapter plugin takes).

    A `KernelModel` is returned as it is. See `HarvestOptions` for the keyword arguments.
    """
    from .kernel import HarvestOptions, KernelModel  # sympy: here, so that importing `rank` (a plugin) does not

    if isinstance(kernel, KernelModel):
        return kernel
    if isinstance(kernel, (list, tuple)) and not kernel:
        raise HarvestError(f"the kernel is empty: {kernel!r} holds no assignments")
    options = HarvestOptions(
        domain_shape=domain_shape,
        align=align,
        field_strides=dict(field_strides or {}),
        base_offsets_bytes=dict(base_offsets_bytes or {}),
    )
    model = get_plugin_manager().hook.perf_harvest(kernel=kernel, options=options)
    if model is None:
        blocked = blocked_adapters()
        what = f"a {type(kernel).__module__}.{type(kernel).__qualname__}"
        if blocked:
            plugins = f"plugins {', '.join(blocked)} are" if len(blocked) > 1 else f"plugin {blocked[0]} is"
            raise HarvestError(
                f"no adapter plugin recognises {what}: the adapter {plugins} blocked (--block-plugin or {BLOCK_ENV})"
            )
        raise HarvestError(
            f"no adapter plugin recognises {what}; "
            "pass a pystencils GPU kernel, pystencils assignments, or install an adapter plugin"
        )
    _check_not_empty(model)
    return model


def _check_not_empty(model: KernelModel) -> None:
    """Refuse a kernel that updates no point (fields no larger than their ghost layers), before any candidate
    is rejected for folding or blocking more points than there are."""
    if model.lattice_updates > 0 and all(n > 0 for n in model.work_items):
        return
    fields = ", ".join(f"{f.name!r} of shape {f.shape}" for f in model.fields)
    raise HarvestError(
        f"kernel {model.name!r} updates no point: its interior is empty ({fields} "
        f"leave nothing inside the ghost layers its accesses need)"
    )


def candidate_space(model, device, options: RankOptions, pm=None) -> CandidateSpace:
    """The one enumeration of candidates that `rank`, `create_kernel` and `measure` share."""
    check_threads(options.threads, device)
    pm = pm or get_plugin_manager()
    seen, accepted, rejected = set(), [], []
    for contributed in pm.hook.perf_candidates(model=model, device=device, options=options):
        for launch in contributed:
            if launch in seen:
                continue
            seen.add(launch)
            reasons = [r for r in pm.hook.perf_check_candidate(model=model, launch=launch, device=device) if r]
            if reasons:
                rejected.append((launch, "; ".join(reasons)))
            else:
                accepted.append(launch)
    if not seen:
        raise ConfigurationError(f"no plugin proposes a launch candidate for kernel {model.name!r}")
    return CandidateSpace(tuple(accepted), tuple(rejected))


def with_measured_resources(
    pm,
    kernel,
    recipe,
    model,
    device,
    options: RankOptions,
    compile_resources: bool = True,
    compile_launches: bool = True,
    recorded: dict | None = None,
):
    """The model with each fold's registers from the `perf_resources` plugins and each launch's from the
    `perf_launch_resources` plugins (unless `compile_launches` is False), else from `recorded` (the resources
    measured data recorded, by launch), its candidate space, and both sets of resources.

    `rank`, `create_kernel` (through `rank`) and `measure` share this, so all of
    them reject and rank candidates with the same occupancy.
    """
    space = candidate_space(model, device, options, pm)
    resources, launch_resources = {}, {}
    if compile_resources and not model.registers_by_fold:
        resources = (
            pm.hook.perf_resources(kernel=kernel, recipe=recipe, model=model, folds=space.folds, device=device) or {}
        )
        if resources:
            model = with_resources(model, resources)
            space = candidate_space(model, device, options, pm)  # registers may now reject candidates
    if compile_resources and compile_launches and not model.resources_by_launch:
        launch_resources = (
            pm.hook.perf_launch_resources(kernel=kernel, model=model, launches=list(space.accepted), device=device)
            or {}
        )
    if recorded:  # what the plugins compiled where they did, else what the measured data recorded
        launch_resources = {**recorded, **launch_resources}
    if launch_resources:
        model = with_launch_resources(model, launch_resources)
        space = candidate_space(model, device, options, pm)
    return model, space, resources, launch_resources


#: fewer candidates than this per worker process are ranked serially: a fork costs about as much as this many
MIN_CANDIDATES_PER_WORKER = 8

#: what forked workers rank: (plugin manager, folded kernel models by fold, launches, device, options)
_FORK_CONTEXT: tuple | None = None


def _estimate(pm, folded, launch, dev, options) -> RankedCandidate:
    """One candidate's metrics and prediction."""
    metrics = pm.hook.perf_estimate(model=folded, launch=launch, device=dev, options=options)
    metrics = _extras(pm, folded, launch, dev, options, metrics)
    prediction = pm.hook.perf_predict(model=folded, launch=launch, device=dev, metrics=metrics, options=options)
    if prediction is None:
        raise PerfError(f"the performance model {options.model!r} gave no prediction for {launch.label}")
    return RankedCandidate(launch, prediction, metrics)


def _estimate_forked(start: int, stop: int) -> list[RankedCandidate]:
    """Candidates ``start .. stop-1`` of the ranking this worker was forked from (`_FORK_CONTEXT`)."""
    pm, folded_models, launches, dev, options = _FORK_CONTEXT
    return [_estimate(pm, folded_models[lc.fold], lc, dev, options) for lc in launches[start:stop]]


def _estimate_all(context: tuple, jobs: int | None, progress) -> list[RankedCandidate]:
    """Every launch of `context` estimated, in order: in `jobs` forked processes (`parallel.run_tasks`) where
    the launches are many enough, else here. The harvest's objects outlive the ranking, so the garbage
    collector is told not to scan them again and again (`gc.freeze`); while the launches are estimated it does not
    run at all: the estimators make next to no reference cycles, and the collector's scans of the compiled
    instructions they keep (thousands of tuples per candidate of a tiled kernel) cost KTT's space 9 % of its
    ranking time (docs/performance.md)."""
    global _FORK_CONTEXT
    pm, folded_models, launches, dev, options = context
    workers = min(resolve_jobs(jobs), len(launches) // MIN_CANDIDATES_PER_WORKER)
    collecting = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        if workers <= 1 or not can_fork():
            return [
                _estimate(pm, folded_models[lc.fold], lc, dev, options)
                for lc in (progress(launches) if progress else launches)
            ]
        chunk = -(-len(launches) // (4 * workers))  # a few chunks per worker: the slow ones even out
        _FORK_CONTEXT = context
        chunks = run_tasks(
            _estimate_forked, [(i, i + chunk) for i in range(0, len(launches), chunk)], jobs=workers, progress=progress
        )
        return [candidate for part in chunks for candidate in part]
    finally:
        _FORK_CONTEXT = None
        gc.freeze()  # what the estimators made and keep joins the harvest's objects, among the oldest
        gc.unfreeze()
        if collecting:
            gc.enable()


def rank(
    kernel,
    device=DEFAULT_DEVICE,
    *,
    threads: int | None = None,
    blocks=None,
    folds=None,
    backend: str = "auto",
    align: str = "base",
    domain_shape=None,
    model: str = DEFAULT_MODEL,
    prune=(),
    plugin_options=None,
    recipe=None,
    compile_resources: bool = True,
    compile_launches: bool = True,
    progress=None,
    jobs: int | None = None,
    options: RankOptions | None = None,
    layout: Layout | None = None,
    remember: bool = False,
    launch_resources: dict | None = None,
) -> Ranking:
    """Rank the launch candidates of a kernel for a device, best predicted first.

    Harvests the kernel's accesses (`harvest`), asks the `perf_candidates` plugins for
    the launches (block size x thread folding), rejects those that cannot run (with the
    reason), estimates each candidate's hardware metrics and turns them into a
    prediction with the chosen performance model. Where a `perf_resources` plugin can
    compile the kernel (the pystencils adapter with nvcc or NVRTC), each folding's
    registers per thread limit the blocks per SM.

    Parameters
    ----------
    kernel : pystencils GpuKernel, assignments, KernelModel or an adapter plugin's kernel
        What to rank: a pystencils or lbmpy GPU kernel (``Target.CUDA``), pystencils
        assignments on fixed-size fields, a `KernelModel`, or whatever an installed
        adapter plugin recognises.
    device : str, path or Device, default `launch.DEFAULT_DEVICE` ("A100")
        Library name or alias (``"V100"``, ``"H100"``, ...), the path of a device file,
        or a `Device`.
    threads : int, optional
        Threads per block of the default candidates (1024 for stencils, 512 for LBM
        kernels).
    blocks : sequence of (int, int, int) or str, optional
        Explicit block sizes ``[(bx, by, bz), ...]``, or as the command line writes them
        (``"32x4x8,16x8x8"``), instead of the default space.
    folds : sequence of (int, int, int) or str, optional
        Thread foldings ``[(fx, fy, fz), ...]`` or ``"1x1x2"``; default (1, 1, 1), (1, 2, 1), (1, 1, 2).
    backend : str, default "auto"
        Footprint backend: ``"auto"`` (enumeration), ``"enum"``, ``"isl"`` or a plugin's.
    align : {"base", "interior"}, default "base"
        Field alignment: element 0 or the first interior point on a 256-B boundary
        (see `HarvestOptions`).
    domain_shape : tuple of int, optional
        Array shape of variable-size fields.
    model : str, default "throughput"
        The performance model (`launch.DEFAULT_MODEL`): ``"throughput"`` (the limiters plus
        latency, occupancy, issue, the L1 pipeline and the tail wave), ``"limiters"`` (the
        paper's, a baseline) or a model plugin's name.
    prune : sequence of str, default ()
        Names of candidate filters (e.g. ``("ryoo",)``); the candidates they drop join
        ``ranking.rejected`` with the filter's reason.
    plugin_options : dict, optional
        Values for the options plugins added (`perf_addoption`), by name.
    recipe : optional
        What the adapter regenerates folded variants from (pystencils:
        ``ApplyOptions(assignments, config)``; assignments are their own recipe).
    compile_resources : bool, default True
        Ask the `perf_resources` plugins for each fold's registers (the pystencils
        adapter compiles with nvcc or NVRTC, about a second per fold, cached).
    compile_launches : bool, default True
        Ask the `perf_launch_resources` plugins for each launch's registers (a CUDA description's
        ``block_size_names``: its source compiled once per block size, seconds each); False: each launch's occupancy
        from its threads, as `tune.replay.spec_candidates` ranks a space before it compiles the launches that
        can be fastest.
    progress : callable, optional
        Wraps an iterable with a length: the accepted candidates, or the chunks of them that worker
        processes finished (e.g. ``tqdm``).
    jobs : int, optional
        Worker processes that estimate the candidates (forked from this one): None or 0 every core, 1 none.
        The ranking is the same whatever their number.
    options : RankOptions, optional
        The candidate space and model as one object (`launch.RankOptions`, what the plugins receive), in place
        of the keywords threads, blocks, folds, backend, model, prune and plugin_options; `create_kernel` and
        the command line pass theirs on.
    layout : Layout, optional
        align and domain_shape as one object (`launch.Layout`), in place of those keywords.
    remember : bool, default False
        Keep the candidates' estimates on disk and take them from there when the same kernel, candidates,
        device, options, plugins and code come again (`estimate_store`; `create_kernel` does).
    launch_resources : dict, optional
        `ResourceUsage` by `LaunchConfig`: the registers and spills each launch's code ran with, where measured
        data recorded them (KTT's output; a Kernel Tuner cache with its `RegisterObserver`), for the launches
        whose code no `perf_launch_resources` plugin compiles.

    Returns
    -------
    Ranking
        The candidates best first (`Ranking.candidates`), the rejected ones with their
        reason (`Ranking.rejected`) and each fold's compiled resources.

    Raises
    ------
    DeviceError
        An unknown device name or a malformed device file.
    HarvestError
        No adapter recognises `kernel`, or it cannot be described (CPU target,
        non-affine address, fields without sizes, ...).
    ConfigurationError
        A malformed option, or a model, filter or backend no installed plugin offers.
    PerfError
        No candidate can run on the device.

    Warns
    -----
    PerfWarning
        A kernel that ranks but cannot run as ranked (`checks`): fields beyond any GPU's memory, code in the
        other vendor's language, an access outside its field, a load of what another thread stores.

    See Also
    --------
    select : the candidate the `perf_select` plugins choose from the ranking.
    pystencils_perf.create_kernel : generate the kernel with the chosen launch.

    Examples
    --------
    >>> import pystencils_perf as pp
    >>> from pystencils_perf.catalog import star_3d
    >>> ranking = pp.rank(star_3d(4, (640, 512, 512)), device="V100")  # doctest: +SKIP
    >>> print(ranking.table(head=10))  # doctest: +SKIP
    """
    from .checks import warn_about_kernel

    dev = get_device(device)
    layout = keywords_or(layout, Layout(domain_shape, align), "the layout (align, domain_shape)")
    kernel_model = harvest(kernel, domain_shape=layout.domain_shape, align=layout.align)
    asked = (threads, blocks, folds, backend, model, tuple(prune), plugin_options)
    if options is None:
        options = RankOptions.of(threads, blocks, folds, backend, model, prune, plugin_options)
    elif asked != (None, None, None, "auto", DEFAULT_MODEL, (), None):
        raise ConfigurationError(
            "give the candidate space and model as keywords (threads, blocks, folds, backend, model, prune, "
            "plugin_options) or as options=RankOptions(...), not both"
        )
    get_backend(options.backend)  # fail early on an unknown name
    pm = get_plugin_manager()
    check_names("performance model", (options.model,), pm.hook.perf_models())
    check_names("candidate filter", options.prune, pm.hook.perf_prune_filters())
    kernel_model, space, resources, launch_resources = with_measured_resources(
        pm, kernel, recipe, kernel_model, dev, options, compile_resources, compile_launches, launch_resources
    )
    folded_models = {fold: kernel_model.folded(fold) for fold in dict.fromkeys(lc.fold for lc in space.accepted)}
    if space.accepted:  # a kernel that races, or reads outside its fields, ranks as well as a right one: warn first
        warn_about_kernel(kernel_model, space.accepted[0].block, dev)
    context = (pm, folded_models, space.accepted, dev, options)
    if remember:
        ranked = estimate_store.remembered(context, lambda: _estimate_all(context, jobs, progress))
    else:
        ranked = _estimate_all(context, jobs, progress)
    rejected = list(space.rejected)
    if not ranked:
        reasons = "; ".join(f"{launch.label}: {reason}" for launch, reason in rejected[:3])
        raise NothingRunsError(
            f"no launch candidate of kernel {kernel_model.name!r} can run on {dev.name} ({reasons})", rejected
        )
    ranked.sort(key=lambda c: (-c.prediction.lups_per_second, c.launch))
    for dropped in pm.hook.perf_prune(model=kernel_model, device=dev, candidates=list(ranked), options=options):
        for candidate, reason in dropped or ():
            if candidate in ranked:
                ranked.remove(candidate)
                rejected.append((candidate.launch, reason))
    if launch_resources:
        note = launch_resources_note(launch_resources)
    elif kernel_model.registers_by_fold and not resources:
        note = "registers per fold given with the kernel model: " + ", ".join(
            f"{'x'.join(map(str, f))}: {r}" for f, r in kernel_model.registers_by_fold
        )
    elif compile_resources or resources:
        unavailable = None if resources else pm.hook.perf_resources_unavailable(kernel=kernel, device=dev)
        note = resources_note(resources, space.folds, dev, unavailable)
    else:
        note = "occupancy assumed from threads per block: register measurement switched off"
    ranking = Ranking(dev, kernel_model.name, ranked, rejected, resources, note, launch_resources)
    if ranked:
        select(ranking)  # the plugins' pick, which the table, the JSON and `select` then name alike
    return ranking


def select(ranking: Ranking) -> RankedCandidate:
    """The candidate the `perf_select` plugins choose from a ranking.

    The default selection takes the best predicted candidate unless others lie within
    the model's measured error of it (`Ranking.tied`); among those it takes the one
    with the fewest idle lanes in partly filled warps, then the most resident warps per
    SM, then the least L2 load traffic (a squarer footprint), then the highest
    predicted throughput (`TIE_BREAK`).

    Parameters
    ----------
    ranking : Ranking
        What `rank` returned.

    Returns
    -------
    RankedCandidate
        The chosen candidate: its ``launch`` (block and fold), ``prediction`` and
        ``metrics``.

    Examples
    --------
    >>> best = pp.select(ranking)  # doctest: +SKIP
    >>> best.launch.block, best.launch.fold, best.prediction.limiter  # doctest: +SKIP
    ((16, 4, 16), (1, 2, 1), 'DRAM')
    """
    if not isinstance(ranking, Ranking):
        raise ConfigurationError(f"select takes the Ranking that rank() returns, got {ranking!r:.60}")
    if not ranking.candidates:
        raise ConfigurationError(f"ranking of kernel {ranking.kernel!r} has no candidate to select")
    ranking.selected = get_plugin_manager().hook.perf_select(ranking=ranking)
    return ranking.selected
