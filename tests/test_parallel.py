"""Ranking in worker processes or on Ray gives the serial ranking, in order; bad `jobs` get one line."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d
from pystencils_perf.errors import ConfigurationError
from pystencils_perf.measure.kernel_tuner import load_tunable_spec
from pystencils_perf import parallel
from pystencils_perf.parallel import can_fork, map_on_every_core, resolve_jobs, run_tasks
from pystencils_perf.rank import MIN_CANDIDATES_PER_WORKER
from pystencils_perf.tune.replay import spec_candidates

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "validation/a100_convolution/convolution.py"
#: two tiles, one guarded for every block (3 does not divide 4096), and blocks of both kinds
CONFIGURATIONS = [
    {
        "block_size_x": bx,
        "block_size_y": by,
        "tile_size_x": tx,
        "tile_size_y": ty,
        "read_only": 0,
        "use_padding": 0,
        "use_shmem": 0,
        "use_cmem": 1,
        "filter_height": 15,
        "filter_width": 15,
    }
    for tx, ty in ((1, 2), (3, 1))
    for bx in (16, 48, 64, 128)
    for by in (1, 4)
]

needs_fork = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")


def _square(x: int) -> int:
    return x * x


def _rows(ranking):
    return [(c.launch, c.prediction, c.metrics) for c in ranking.candidates], ranking.rejected


@needs_fork
def test_ranking_in_worker_processes_is_the_serial_ranking():
    kernel = star_3d(2, (96, 64, 64))
    serial = pp.rank(kernel, "V100", jobs=1, compile_resources=False)
    assert len(serial.candidates) >= 3 * MIN_CANDIDATES_PER_WORKER
    assert _rows(pp.rank(kernel, "V100", jobs=3, compile_resources=False)) == _rows(serial)


@pytest.mark.parametrize("collecting", [True, False])
def test_a_ranking_leaves_the_garbage_collector_as_it_found_it(collecting, monkeypatch):
    """The collector does not run while the launches are estimated (`rank._estimate_all`), and is as the caller
    had it afterwards: on or off, nothing frozen."""
    import gc
    import importlib

    ranking = importlib.import_module("pystencils_perf.rank")
    estimate, seen = ranking._estimate, []
    monkeypatch.setattr(ranking, "_estimate", lambda *args: seen.append(gc.isenabled()) or estimate(*args))
    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        pp.rank(star_3d(1, (64, 32, 32)), "V100", jobs=1, compile_resources=False)
        assert seen and not any(seen)
        assert gc.isenabled() is collecting and gc.get_freeze_count() == 0
    finally:
        (gc.enable if was else gc.disable)()


@needs_fork
def test_a_specs_variants_in_worker_processes_are_predicted_as_serially():
    spec = load_tunable_spec(SPEC)
    serial = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    parallel = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=2)
    assert [(c.params, c.predicted_seconds) for c in parallel.candidates] == [
        (c.params, c.predicted_seconds) for c in serial.candidates
    ]
    assert len(serial.candidates) == len(CONFIGURATIONS)


def test_a_tuner_may_measure_once_while_the_rest_of_a_slow_space_is_ranked():
    """`meanwhile` is called once, with the candidates of the tasks finished so far, while others still run."""
    spec, seen = load_tunable_spec(SPEC), []
    space = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, meanwhile=seen.append, meanwhile_after_s=0.0)
    assert len(seen) == 1
    assert {c.params["tile_size_x"] for c in seen[0]} == {1} and len(seen[0]) == len(CONFIGURATIONS) // 2
    assert [c.predicted_seconds for c in seen[0]] == [c.predicted_seconds for c in space.candidates[: len(seen[0])]]
    spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, meanwhile=seen.append, meanwhile_after_s=60.0)
    assert len(seen) == 1  # a space ranked in less time measures nothing meanwhile


def test_a_specs_variants_on_a_local_ray_instance_are_predicted_as_serially():
    """In a process of its own: Ray's threads stay out of this one, whose later tests fork workers."""
    pytest.importorskip("ray")
    script = (
        "import json, sys, ray\n"
        "from pystencils_perf.measure.kernel_tuner import load_tunable_spec\n"
        "from pystencils_perf.tune.replay import spec_candidates\n"
        "ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)\n"
        f"space = spec_candidates(json.loads(sys.argv[1]), load_tunable_spec({str(SPEC)!r}), 'A100', executor='ray')\n"
        "ray.shutdown()\n"
        "print(json.dumps([[c.params, c.predicted_seconds] for c in space.candidates]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(CONFIGURATIONS[:8])], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    serial = spec_candidates(CONFIGURATIONS[:8], load_tunable_spec(SPEC), "A100", jobs=1)
    assert json.loads(done.stdout.splitlines()[-1]) == [[c.params, c.predicted_seconds] for c in serial.candidates]


@pytest.mark.parametrize("jobs", [1, 2])
def test_tasks_come_back_in_order_and_progress_sees_each_with_the_total(jobs):
    seen = []

    def progress(finished):
        seen.append(len(finished))
        for item in finished:
            seen.append(item)
            yield item

    assert run_tasks(_square, [(i,) for i in range(7)], jobs=jobs, progress=progress) == [i * i for i in range(7)]
    assert seen[0] == 7 and sorted(seen[1:]) == [(i, i * i) for i in range(7)]


@pytest.mark.parametrize("jobs", [-1, 1.5, True, "2"])
def test_a_number_of_jobs_that_is_not_a_count_is_refused(jobs):
    with pytest.raises(ConfigurationError, match="jobs must be"):
        resolve_jobs(jobs)


def test_compilers_run_one_per_core_and_their_results_come_back_in_order(monkeypatch):
    """Per-launch compilation waits on one compiler per core: three cores, three items that each wait until all
    three have started (a serial map would wait forever, here until the barrier's timeout breaks it)."""
    monkeypatch.setattr(parallel, "available_cores", lambda: 3)
    all_started = threading.Barrier(3, timeout=30)

    def compile_(item):
        all_started.wait()
        return item * 10

    assert map_on_every_core(compile_, [1, 2, 3]) == [10, 20, 30]


def test_an_unknown_executor_is_refused():
    with pytest.raises(ConfigurationError, match="unknown executor 'threads'"):
        run_tasks(_square, [(1,)], executor="threads")


def test_a_variant_that_runs_in_none_of_its_blocks_is_rejected_not_an_error(tmp_path):
    """A shared-memory tile whose code needs 255 registers runs in no block of 1024 threads (issue 56): its
    configurations are rejected with the reason, and the other variant is still ranked."""
    spec = tmp_path / "spec.py"
    spec.write_text(
        "from pystencils_perf_cuda import Array, CudaKernel\n"
        "lattice_updates = 4096\n"
        "def kernel_for(params):\n"
        "    return CudaKernel(name='copy', arrays=(Array('a', 'float', (4096,)), Array('b', 'float', (4096,))),\n"
        "        threads=(4096,), indices={'x': 'blockIdx.x * blockDim.x + threadIdx.x'},\n"
        "        loads=('a[x]',), stores=('b[x]',), registers_per_thread=int(params['registers']))\n"
    )
    configurations = [{"block_size_x": 256, "registers": 32}, {"block_size_x": 1024, "registers": 255}]
    space = spec_candidates(configurations, load_tunable_spec(spec), "A100", jobs=1)
    assert [(c.params["registers"], c.params["block_size_x"]) for c in space.candidates] == [(32, 256)]
    ((params, why),) = space.rejected
    assert params["block_size_x"] == 1024 and "occupancy 0: 255 registers" in why
