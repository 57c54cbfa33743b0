"""Ranking work spread over this machine's cores (a process pool) or a Ray cluster.

Every candidate's estimate is independent of the others', so a space splits into tasks that run anywhere and
come back in order: the ranking is the same as the serial one, bit for bit.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed

from .errors import ConfigurationError

#: where tasks run: this machine's cores, or the Ray cluster that ``ray.init`` connects to
EXECUTORS = ("processes", "ray")


def available_cores() -> int:
    """The cores this process may run on (its affinity, where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_jobs(jobs: int | None) -> int:
    """Worker processes for `jobs`: None or 0 means every available core."""
    if jobs is None or jobs == 0:
        return available_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise ConfigurationError(f"jobs must be a whole number of processes >= 0 (0: every core), got {jobs!r}")
    return jobs


def can_fork() -> bool:
    """Whether workers can start as copies of this process, inheriting what it loaded (kernels, plugins); not
    in a daemonic worker (one of a `multiprocessing.Pool`), which may not have children."""
    return "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon


def map_on_every_core(function: Callable, items: Sequence) -> list:
    """``[function(item) for item in items]``, one thread per core: for work that waits on a child process (a
    compiler), which releases the GIL meanwhile. Ctrl-C cancels the items not yet started."""
    workers = min(available_cores(), len(items))
    if workers <= 1:
        return [function(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        results = list(pool.map(function, items))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


def run_tasks(
    function: Callable, tasks: Sequence[tuple], *, jobs: int | None = None, executor: str = "processes", progress=None
) -> list:
    """``[function(*task) for task in tasks]``, computed in parallel.

    ``executor="processes"``: `jobs` worker processes forked from this one (every core by default), so that
    they share what this process has loaded; serial where there is one task, one job or no fork.
    ``executor="ray"``: one Ray task each, on the cluster ``ray.init()`` connects to (``RAY_ADDRESS``, or a
    local instance); `function` and the tasks travel by pickle, so they must not depend on what this process
    registered at run time. `progress` wraps the iterable of finished tasks (it has a length), e.g. tqdm;
    Ctrl-C cancels the tasks not yet started.
    """
    if executor not in EXECUTORS:
        raise ConfigurationError(f"unknown executor {executor!r}; choose {', '.join(EXECUTORS)}")
    results: list = [None] * len(tasks)
    workers = min(resolve_jobs(jobs), len(tasks))
    if executor == "ray":
        finished = _on_ray(function, tasks)
    elif workers <= 1 or not can_fork():
        finished = ((i, function(*task)) for i, task in enumerate(tasks))
    else:
        finished = _in_processes(function, tasks, workers)
    finished = SizedIterable(finished, len(tasks))
    for i, result in progress(finished) if progress else finished:
        results[i] = result
    return results


class SizedIterable:
    """An iterable with a length, so that a progress bar knows its total."""

    def __init__(self, iterable, length: int):
        self._iterable, self._length = iterable, length

    def __len__(self) -> int:
        return self._length

    def __iter__(self):
        return iter(self._iterable)


def _in_processes(function, tasks, workers: int):
    """(index, result) of each task as it finishes, from `workers` forked processes."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        futures = {pool.submit(function, *task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            yield futures[future], future.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _on_ray(function, tasks):
    """(index, result) of each task as it finishes, from Ray tasks."""
    try:
        import ray
    except ImportError:
        raise ConfigurationError("executor 'ray' needs Ray: pip install 'pystencils-perf[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), include_dashboard=False, log_to_driver=False)
    remote = ray.remote(function)
    refs = [remote.remote(*task) for task in tasks]
    index = {ref: i for i, ref in enumerate(refs)}
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield index[done[0]], ray.get(done[0])
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
