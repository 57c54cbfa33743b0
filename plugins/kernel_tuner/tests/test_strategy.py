"""`ModelGuided` as a Kernel Tuner strategy, in Kernel Tuner's simulation mode (cache replay)."""

import json
import math
import warnings

import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")

from pystencils_perf_kernel_tuner.strategy import ModelGuided  # noqa: E402

from pystencils_perf.errors import ConfigurationError  # noqa: E402

SPEC = """
from pystencils_perf.catalog import jacobi_2d

lattice_updates = 64 * 64
fixed_parameters = {"filter": 5}

def kernel_for(params):
    return jacobi_2d((66, 66))
"""
TUNE_PARAMS = {"block_size_x": [8, 16, 32, 64], "block_size_y": [1, 2, 4, 8], "use_fma": [0, 1], "filter": [5]}


def synthetic_time_ms(bx, by, fma):
    """Made-up times with one best configuration (bx 32, by 2, use_fma 1): test input, not a measurement."""
    return 1.0 + 0.2 * abs(math.log2(bx) - 5) + 0.1 * abs(math.log2(by) - 1) + 0.3 * (1 - fma)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("strategy")
    cache = {}
    for bx in TUNE_PARAMS["block_size_x"]:
        for by in TUNE_PARAMS["block_size_y"]:
            for fma in (0, 1):
                time = "RuntimeFailedConfig" if (bx, by, fma) == (64, 8, 0) else synthetic_time_ms(bx, by, fma)
                cache[f"{bx},{by},{fma},5"] = {
                    "block_size_x": bx,
                    "block_size_y": by,
                    "use_fma": fma,
                    "filter": 5,
                    "time": time,
                    "times": [time] * 3 if time != "RuntimeFailedConfig" else [],
                }
    header = {
        "device_name": "Test GPU",
        "kernel_name": "stencil",
        "problem_size": [64, 64],
        "tune_params_keys": list(TUNE_PARAMS),
        "tune_params": TUNE_PARAMS,
        "objective": "time",
        "cache": cache,
    }
    (folder / "cache.json").write_text(json.dumps(header))
    (folder / "spec.py").write_text(SPEC)
    return folder


def simulate(files, strategy, max_fevals):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(
            "stencil",
            "__global__ void stencil() {}",
            (64, 64),
            [],
            TUNE_PARAMS,
            cache=str(files / "cache.json"),
            simulation_mode=True,
            strategy=strategy,
            strategy_options={"max_fevals": max_fevals},
            verbose=False,
            quiet=True,
        )
    return results


def test_the_strategy_runs_under_kernel_tuner_and_finds_the_best(files):
    strategy = ModelGuided(files / "spec.py", "V100", early_stop=False)
    results = simulate(files, strategy, 12)
    assert 1 <= len(results) <= 12
    timed = [r for r in results if isinstance(r["time"], float)]
    best = min(timed, key=lambda r: r["time"])
    assert (best["block_size_x"], best["block_size_y"], best["use_fma"]) == (32, 2, 1)
    assert len(strategy.candidates) == 32 and "budget" in strategy.stop_reason


def test_batches_and_early_stop(files):
    strategy = ModelGuided(files / "spec.py", "V100", batch=4)
    results = simulate(files, strategy, 32)
    assert len(results) % 4 == 0 or strategy.stop_reason != "nothing better is likely"
    assert len({(r["block_size_x"], r["block_size_y"], r["use_fma"]) for r in results}) == len(results)


@pytest.mark.parametrize(
    "options, message",
    [({"batch": 0}, "batch = 0 is not a positive integer"), ({"batch": "2"}, "batch = '2' is not a positive"),
     ({"batch": True}, "batch = True is not"), ({"early_stop": "no"}, "early_stop = 'no' is not True or False"),
     ({"compile_all": 1}, "compile_all = 1 is not True or False"),
     ({"settings": {"exploration": 1}}, "settings = {'exploration': 1} is not a SearchSettings")],
)  # fmt: skip
def test_bad_options_are_named_before_tuning(options, message):
    """A batch of 0 asked the runner for nothing, again and again: Kernel Tuner never returned."""
    with pytest.raises(ConfigurationError, match=message):
        ModelGuided(**options)


def test_a_budget_spent_while_the_space_is_ranked_ends_the_search(files, monkeypatch):
    """A slow space's first measurement is made while it is ranked; where that spends Kernel Tuner's budget
    (``max_fevals = 1``), Kernel Tuner's stop left the strategy and `tune_kernel` raised it."""
    strategy = ModelGuided(files / "spec.py", "V100")
    ranked = strategy._candidates

    def ranking_slowly(configurations, meanwhile=None):
        candidates = ranked(configurations)
        meanwhile(candidates)  # as `spec_candidates` does where the ranking takes seconds
        return candidates

    monkeypatch.setattr(strategy, "_candidates", ranking_slowly)
    results = simulate(files, strategy, 1)
    assert len(results) == 1 and strategy.stop_reason == "Kernel Tuner's budget is spent"


def test_prepared_predictions_skip_the_ranking(files, monkeypatch):
    import pystencils_perf_kernel_tuner.strategy as module

    first = ModelGuided(files / "spec.py", "V100", early_stop=False)
    simulate(files, first, 4)
    monkeypatch.setattr(module, "spec_candidates", lambda *a, **k: pytest.fail("ranked again"))
    again = ModelGuided(files / "spec.py", "V100", early_stop=False, predictions=first.predictions)
    assert len(simulate(files, again, 4)) == 4


def test_without_a_spec_the_search_learns_from_measurements_alone(files):
    """A kernel no SPEC describes: every configuration starts alike, and the measurements lead to the best."""
    strategy = ModelGuided(early_stop=False)
    results = simulate(files, strategy, 20)
    assert len(strategy.candidates) == 32 and len(set(c.predicted_seconds for c in strategy.candidates)) == 1
    best = min((r for r in results if isinstance(r["time"], float)), key=lambda r: r["time"])
    assert best["time"] <= 1.1 * synthetic_time_ms(32, 2, 1)


def test_configurations_the_spec_does_not_describe_are_candidates_too(files, tmp_path):
    narrow = tmp_path / "narrow.py"
    narrow.write_text((files / "spec.py").read_text().replace('{"filter": 5}', '{"filter": 5, "use_fma": 1}'))
    strategy = ModelGuided(narrow, "V100", early_stop=False)
    simulate(files, strategy, 3)
    predicted = {c.predicted_seconds for c in strategy.candidates if c.params["use_fma"] == 0}
    assert len(strategy.candidates) == 32 and len(predicted) == 1  # the use_fma 0 half at one level


def test_parallel_workers_are_allowed(files):
    from kernel_tuner import interface

    strategy = ModelGuided(files / "spec.py", "V100")
    assert strategy not in interface._STRATEGY_PARALLEL
    assert strategy.allow_parallel_workers() is strategy and strategy.allow_parallel_workers() is strategy
    assert sum(s is strategy for s in interface._STRATEGY_PARALLEL) == 1
    interface._STRATEGY_PARALLEL.remove(strategy)


def test_a_simulation_cache_is_plain_json_whose_header_lists_only_what_its_rows_hold(tmp_path):
    import gzip

    from pystencils_perf_kernel_tuner.simulation import simulation_cache

    header = {
        "kernel_name": "k",
        "problem_size": [8],
        "tune_params_keys": ["block_size_x", "use_shmem"],
        "tune_params": {"block_size_x": [16, 32, 64], "use_shmem": [0, 1]},
        "objective": "time",
        "cache": {f"{bx},0": {"block_size_x": bx, "use_shmem": 0, "time": 1.0} for bx in (16, 32)},
    }
    gzipped = tmp_path / "reduced_cache.json.gz"
    gzipped.write_bytes(gzip.compress(json.dumps(header).encode()))
    path, tune_params = simulation_cache(gzipped, tmp_path)
    assert path == str(tmp_path / "reduced_cache.json")
    assert tune_params == {"block_size_x": [16, 32], "use_shmem": [0]}
    assert json.loads((tmp_path / "reduced_cache.json").read_text())["tune_params"] == tune_params


def test_the_readmes_replay_example_is_the_example_file_and_finds_the_optimum(tmp_path):
    """The README shows `examples/replay_convolution.py` as it is, and it runs as the README says."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    plugin = Path(__file__).resolve().parents[1]
    example = plugin / "examples/replay_convolution.py"
    readme = (plugin / "README.md").read_text()
    shown = readme.split("examples/tune_convolution.py --device A100` is the same search")[1]
    shown = shown.split("```python\n", 1)[1].split("```", 1)[0]
    assert shown == example.read_text()
    done = subprocess.run(
        [sys.executable, str(example)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSTENCILS_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.fullmatch(r"(\d+) configurations measured \((.*)\); best ([0-9.]+) ms: \{.*\}\n", done.stdout)
    assert found, done.stdout
    # the cache's optimum is 1.0212 ms; which part of the space is ranked first when the first measurement is
    # made may vary with the machine's load (docs/tuning.md), so allow the timings' noise
    assert int(found[1]) <= 10 and float(found[3]) <= 1.0212 * 1.03


@pytest.mark.parametrize("compile_all, head", [(False, 10), (True, None)])
def test_the_strategy_compiles_the_launches_that_can_be_fastest_unless_told(files, monkeypatch, compile_all, head):
    """Where a SPEC's kernels compile per launch, `ModelGuided` asks `spec_candidates` to compile in the model's
    order until the `COMPILED_HEAD` fastest are certain; ``compile_all=True`` compiles every launch."""
    from pystencils_perf.tune.replay import SpecCandidates
    from pystencils_perf_kernel_tuner import strategy as module

    asked = []
    monkeypatch.setattr(module, "spec_candidates", lambda *a, **k: asked.append(k) or SpecCandidates([], []))
    ModelGuided(files / "spec.py", "V100", compile_all=compile_all)._candidates([{"block_size_x": 8}])
    assert [k["compile_until_certain"] for k in asked] == [head]


def test_a_launch_left_uncompiled_is_compiled_before_kernel_tuner_runs_it(files, monkeypatch):
    """A candidate whose time is a bound (`spec_candidates` left it uncompiled) is compiled before Kernel Tuner is
    asked to run it: the search's best bound, whose code cannot run (the stand-in compiler says so), is never run
    and costs no evaluation; the rest are all run."""
    from pystencils_perf.tune.replay import SpecCandidates
    from pystencils_perf.tune.tuner import Candidate
    from pystencils_perf_kernel_tuner import strategy as module

    unrunnable = {"block_size_x": 32, "block_size_y": 2, "use_fma": 1, "filter": 5}
    candidates = [
        Candidate(
            params, synthetic_time_ms(params["block_size_x"], params["block_size_y"], params["use_fma"]), None, False
        )
        for params in (
            {"block_size_x": bx, "block_size_y": by, "use_fma": fma, "filter": 5}
            for bx in TUNE_PARAMS["block_size_x"]
            for by in TUNE_PARAMS["block_size_y"]
            for fma in (0, 1)
        )
    ]

    class StandInCompiler:  # what `CompileBeforeMeasuring` answers: the candidate with its own time, or why not
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, candidate):
            if candidate.params == unrunnable:
                return "its code needs 300 registers"
            return Candidate(candidate.params, candidate.predicted_seconds, candidate.launch)

    monkeypatch.setattr(module, "CompileBeforeMeasuring", StandInCompiler)
    strategy = ModelGuided(files / "spec.py", "V100", early_stop=False, predictions=SpecCandidates(candidates, []))
    results = simulate(files, strategy, 32)
    run = [{k: r[k] for k in unrunnable} for r in results]
    assert unrunnable not in run and len(run) == 31
    assert [(c.params, why) for c, why in strategy.rejected] == [(unrunnable, "its code needs 300 registers")]
