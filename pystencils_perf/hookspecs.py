"""Every hook of pystencils-perf, documented (pluggy project name ``pystencils_perf``).

One hook per decision. Built-in plugins (the pystencils adapter, the default
candidate space, the estimator, the limiter model, the default selection) are
registered exactly like external ones: through the ``pystencils_perf``
entry-point group of their distribution. A plugin is any module or object with
functions decorated by `hookimpl` and named like the specs below.

The flow of one ranking::

    model = perf_harvest(kernel, options)                    # first adapter that recognises the kernel
    for launch in perf_candidates(model, device, options):   # all plugins contribute candidates
        reasons = perf_check_candidate(model, launch, device)  # any reason rejects the candidate
        metrics = merge(perf_estimate(model, launch, device, options))
        prediction = perf_predict(model, launch, device, metrics)
    choice = perf_select(ranking)
    kernel = perf_apply(kernel, choice, options)            # the adapter regenerates or configures it
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "pystencils_perf"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def perf_harvest(kernel, options):
    """Describe a generator's kernel object as a `KernelModel`.

    :param kernel: whatever the user passed (a pystencils ``GpuKernel``, a loopy
        kernel, a declarative description, ...).
    :param options: `HarvestOptions` (domain shape for variable-size fields, alignment).
    :return: a `KernelModel`, or None if this adapter does not recognise `kernel`.
        Raise `HarvestError` if it recognises the kernel but cannot describe it.
    """


@hookspec
def perf_candidates(model, device, options):
    """Contribute launch candidates.

    :param model: the harvested `KernelModel`.
    :param device: the target `Device`.
    :param options: `RankOptions` (thread counts, explicit blocks and folds).
    :return: a list of `LaunchConfig`; the lists of all plugins are joined and
        de-duplicated in order.
    """


@hookspec
def perf_check_candidate(model, launch, device):
    """Give a reason to reject a candidate (too many threads, registers, shared memory).

    :return: a one-line reason, or None if this plugin has no objection.
    """


@hookspec
def perf_estimate(model, launch, device, options):
    """Contribute hardware metrics of one candidate.

    :param model: the kernel model, already folded as `launch.fold` asks.
    :return: a dict of metrics (names with units, e.g. ``dram_load_bytes_per_lup``);
        the dicts of all plugins are merged, a key given twice is an error.
    """


@hookspec(firstresult=True)
def perf_predict(model, launch, device, metrics):
    """Turn metrics into a `Prediction` (throughput, the time of every limiter, the limiter).

    Other performance models plug in here; the first non-None answer wins
    (register with ``tryfirst=True`` to take precedence over the built-in model).
    """


@hookspec(firstresult=True)
def perf_select(ranking):
    """Choose the candidate handed back to the generator from a `Ranking` (best first).

    :return: the chosen `RankedCandidate`.
    """


@hookspec(firstresult=True)
def perf_apply(kernel, launch, options):
    """Apply a chosen `LaunchConfig` to the generator's kernel object.

    :param options: adapter-specific; what the adapter needs to regenerate the
        kernel. The pystencils adapter expects `ApplyOptions(assignments, config)`,
        because a built ``GpuKernel`` cannot change its folding or block size.
    :return: the configured kernel (the same object or a regenerated one), or
        None if this adapter does not handle `kernel`.
    """
