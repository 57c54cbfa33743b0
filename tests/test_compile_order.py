"""`spec_candidates(..., compile_until_certain=N)`: the launches that can be fastest are compiled first, and only
until the N fastest are certain; their times and order are those of compiling every launch."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from pystencils_perf.errors import ConfigurationError
from pystencils_perf.hookspecs import hookimpl
from pystencils_perf.launch import COMPILED_HEAD
from pystencils_perf.plugins import get_plugin_manager
from pystencils_perf.resources import ResourceUsage
from pystencils_perf.tune.replay import spec_candidates
from pystencils_perf.tune.tuner import params_key
from pystencils_perf.measure.kernel_tuner import load_tunable_spec

SPEC = Path(__file__).resolve().parents[1] / "validation/a100_convolution/convolution.py"
#: the convolution SPEC's parameters that no configuration here changes
UNCHANGED = {"read_only": 0, "use_padding": 0, "use_shmem": 0, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
CONFIGURATIONS = [
    {"block_size_x": bx, "block_size_y": by, "tile_size_x": t, "tile_size_y": t, **UNCHANGED}
    for t in (1, 2, 4)
    for bx in (16, 32, 64, 128, 256)
    for by in (1, 2, 4)
]


class TileRegisters:
    """A per-launch compiler (as a CUDA description's ``block_size_names`` asks nvcc) that answers at once: a thread
    needs more registers the larger its tile, and 4x4 tiles in blocks of 512 threads or more need more than an SM
    holds (rejected); a block holds 32 B of shared memory per thread. It keeps every launch it was asked for."""

    def __init__(self):
        self.asked = []

    @hookimpl
    def perf_launch_resources(self, kernel, model, launches, device):
        if not kernel.name.startswith("convolution15"):
            return None
        self.asked += launches
        registers = {"1x1": 32, "2x2": 64, "4x4": 255}[kernel.name.split("tile ")[1].split()[0]]
        return {launch: ResourceUsage("sm_80", registers, 0, 0, 32 * launch.threads_per_block) for launch in launches}


@contextmanager
def _registered(plugin, name: str):
    """`plugin` registered within the block."""
    pm = get_plugin_manager()
    pm.register(plugin, name=name)
    try:
        yield plugin
    finally:
        pm.unregister(plugin)


@pytest.fixture
def tile_registers():
    with _registered(TileRegisters(), "test-tile-registers") as plugin:
        yield plugin


def _times(space) -> dict:
    return {params_key(c.params): c.predicted_seconds for c in space.candidates}


@pytest.mark.parametrize("head", [1, 5])
def test_the_fastest_launches_are_those_of_compiling_every_one(tile_registers, head):
    spec = load_tunable_spec(SPEC)
    every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    assert len(tile_registers.asked) == len(CONFIGURATIONS) and every.not_compiled == 0
    tile_registers.asked.clear()
    ordered = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, compile_until_certain=head)
    compiled = len(tile_registers.asked)
    assert head <= compiled < len(CONFIGURATIONS)
    # the launches never compiled keep the time of their occupancy from threads: still candidates, none rejected
    assert ordered.not_compiled == len(CONFIGURATIONS) - compiled
    assert len(ordered.candidates) + len(ordered.rejected) == len(CONFIGURATIONS)
    fastest, fastest_ordered = (sorted(t, key=t.get)[:head] for t in (_times(every), _times(ordered)))
    assert fastest_ordered == fastest
    assert all(_times(ordered)[k] == pytest.approx(_times(every)[k], rel=1e-12) for k in fastest)


def test_a_launch_its_code_cannot_run_is_rejected_once_compiled(tile_registers):
    """255 registers in blocks of 512 threads or more: more than the SM's 65536; without registers those launches
    are among the fastest, so they are compiled and rejected, as compiling every launch rejects them."""
    spec = load_tunable_spec(SPEC)
    ordered = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, compile_until_certain=3)
    too_many = {
        params_key(p) for p in CONFIGURATIONS if p["tile_size_x"] == 4 and p["block_size_x"] * p["block_size_y"] >= 512
    }
    rejected = {params_key(p) for p, _ in ordered.rejected}
    assert rejected and rejected <= too_many
    assert not rejected & set(_times(ordered))


def test_a_head_that_is_not_positive_is_refused():
    with pytest.raises(ConfigurationError, match="compile_until_certain=0: give a positive number"):
        spec_candidates(CONFIGURATIONS[:2], load_tunable_spec(SPEC), "A100", jobs=1, compile_until_certain=0)


def test_without_a_per_launch_compiler_nothing_changes():
    spec = load_tunable_spec(SPEC)
    every = spec_candidates(CONFIGURATIONS[:9], spec, "A100", jobs=1)
    ordered = spec_candidates(CONFIGURATIONS[:9], spec, "A100", jobs=1, compile_until_certain=2)
    assert _times(ordered) == _times(every) and ordered.not_compiled == 0


def test_a_launch_holds_the_shared_memory_of_its_own_code(tile_registers):
    """Each launch's compiled code has its own shared memory: a small block's occupancy does not take the largest
    block's, whichever launches are ranked beside it."""
    import pystencils_perf as pp

    kernel = load_tunable_spec(SPEC).kernel(CONFIGURATIONS[0])
    alone = pp.rank(kernel, "A100", blocks=[(16, 1, 1)], folds=[(1, 1, 1)], jobs=1).candidates[0]
    beside = pp.rank(kernel, "A100", blocks=[(16, 1, 1), (256, 4, 1)], folds=[(1, 1, 1)], jobs=1)
    small = next(c for c in beside.candidates if c.launch.block == (16, 1, 1))
    assert small.metrics.blocks_per_sm == alone.metrics.blocks_per_sm == 32  # 512 B each: the SM's block limit
    assert small.prediction == alone.prediction


@pytest.mark.parametrize("flag, head", [([], COMPILED_HEAD), (["--compile-all"], None)])
def test_tune_replay_compiles_in_order_unless_told(flag, head, monkeypatch, tmp_path):
    from pystencils_perf import cli
    from pystencils_perf.tune import replay

    asked, original = [], replay.replay_candidates
    monkeypatch.setattr(replay, "replay_candidates", lambda *a, **k: asked.append(k) or original(*a, **k))
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(tmp_path))
    root = Path(__file__).resolve().parents[1]
    cache = root / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
    spec = root / "validation/a100_convolution/convolution_tile1x1.py"
    args = ["tune", str(spec), "--device", "RTX-A4000", "--replay", str(cache), "--budget", "1", "--jobs", "1"]
    assert cli.main(args + flag) == 0
    assert [k["compile_until_certain"] for k in asked] == [head]


class OtherTilesRegisters(TileRegisters):
    """Compiles every tile but one (a SPEC whose variants give a source only in part)."""

    def __init__(self, skipped: str):
        super().__init__()
        self.skipped = skipped

    @hookimpl
    def perf_launch_resources(self, kernel, model, launches, device):
        if f"tile {self.skipped}" in kernel.name:
            return None
        return super().perf_launch_resources(kernel, model, launches, device)


def test_a_space_whose_fastest_variant_compiles_nothing_still_compiles_the_others():
    """The launch first without registers belongs to a variant no plugin compiles: the ordered compile goes on to the
    variants that do, and its 20 fastest are those of compiling every launch."""
    spec = load_tunable_spec(SPEC)
    plain = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    first = min(plain.candidates, key=lambda c: c.predicted_seconds).params
    with _registered(OtherTilesRegisters(f"{first['tile_size_x']}x{first['tile_size_y']}"), "test-other") as plugin:
        every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
        plugin.asked.clear()
        ordered = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, compile_until_certain=20)
    assert plugin.asked  # 15 of the 45 launches are the skipped variant's: the 20 fastest need others compiled
    fastest, fastest_ordered = (sorted(t, key=t.get)[:20] for t in (_times(every), _times(ordered)))
    assert fastest_ordered == fastest


class NarrowBlocksOutOfSharedMemory(TileRegisters):
    """As `TileRegisters`, and blocks of 1x1 tiles at most 64 threads wide hold more shared memory than an SM has:
    launches whose code cannot run that are slow without it, so that the ordered compile leaves them uncompiled."""

    @staticmethod
    def fails(params: dict) -> bool:
        return params["tile_size_x"] == 1 and params["block_size_x"] <= 64

    @hookimpl
    def perf_launch_resources(self, kernel, model, launches, device):
        usage = super().perf_launch_resources(kernel, model, launches, device)
        if usage is None or "tile 1x1" not in kernel.name:
            return usage
        return {
            launch: replace(u, shared_memory_bytes=1 << 20) if launch.block[0] <= 64 else u
            for launch, u in usage.items()
        }


@pytest.fixture
def narrow_blocks():
    with _registered(NarrowBlocksOutOfSharedMemory(), "test-narrow-blocks") as plugin:
        yield plugin


class TimesOf:
    """A GPU as the compiled code has it: each configuration takes its time when every launch is compiled (in ms),
    and a launch whose code cannot run fails."""

    def __init__(self, every, failing: set[str]):
        self.times = {key: None if key in failing else 1e3 * t for key, t in _times(every).items()} | dict.fromkeys(
            failing
        )
        self.measured = []

    def fingerprint(self):
        return {"name": "test GPU"}

    def time_ms(self, candidate):
        self.measured.append(params_key(candidate.params))
        return self.times[params_key(candidate.params)]


def _failing() -> set[str]:
    return {params_key(p) for p in CONFIGURATIONS if NarrowBlocksOutOfSharedMemory.fails(p)}


@pytest.mark.parametrize("compiled_first", [True, False])
def test_a_launch_left_uncompiled_is_compiled_before_it_is_measured(narrow_blocks, compiled_first):
    """Every candidate measured (no early stop): with `CompileBeforeMeasuring` the launches whose code cannot run are
    rejected as they come up, cost no measurement and are never measured, and each measured launch has the time of
    compiling every launch; without it the search measures them and they fail."""
    from pystencils_perf.tune.replay import CompileBeforeMeasuring
    from pystencils_perf.tune.tuner import tune

    spec = load_tunable_spec(SPEC)
    every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    ordered = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, compile_until_certain=1)
    too_many = _failing()
    left = {params_key(c.params) for c in ordered.candidates} & too_many
    assert left and all(not c.exact for c in ordered.candidates if params_key(c.params) in left)
    gpu = TimesOf(every, too_many)
    admit = CompileBeforeMeasuring(spec, "A100") if compiled_first else None
    result = tune(ordered.candidates, gpu, budget=100, kernel="k", early_stop=False, admit=admit)
    measured = set(gpu.measured)
    if not compiled_first:
        assert left <= measured and not result.rejected
        return
    assert not measured & too_many and measured == set(_times(every))
    assert {params_key(c.params) for c, _ in result.rejected} == left
    assert all("shared memory" in reason for _, reason in result.rejected)
    assert len(result.candidates) == len(every.candidates) and result.record.stop_reason.startswith(
        f"every one of the {len(every.candidates)} candidates"
    )
    assert all(c.exact for c in result.candidates)
    assert _times(result) == pytest.approx(_times(every), rel=1e-12)


def test_the_first_measurement_passes_over_a_launch_its_code_cannot_run(narrow_blocks):
    """Measured while the space is ranked (`FirstMeasurement`): the best bound whose code cannot run is compiled and
    passed over, and the best that runs is measured."""
    from pystencils_perf.tune.replay import CompileBeforeMeasuring
    from pystencils_perf.tune.tuner import Candidate, FirstMeasurement

    spec = load_tunable_spec(SPEC)
    every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    too_many = _failing()
    runs = next(c for c in every.candidates if params_key(c.params) not in too_many)
    fails = next(p for p in CONFIGURATIONS if params_key(p) in too_many)
    bounds = [Candidate(fails, 1.0, exact=False), Candidate(runs.params, 2.0, exact=False)]
    gpu = TimesOf(every, too_many)
    first = FirstMeasurement(gpu, CompileBeforeMeasuring(spec, "A100"))
    first(bounds)
    assert gpu.measured == [params_key(runs.params)]
    (candidate, time_ms), *_ = first.measured
    assert candidate.exact and candidate.predicted_seconds == pytest.approx(runs.predicted_seconds, rel=1e-12)
    assert time_ms == pytest.approx(1e3 * runs.predicted_seconds)


def test_the_first_measurement_passes_over_a_bound_whose_code_is_slower_than_the_next(narrow_blocks):
    """A bound compiled for the first measurement goes back among the others with its own time: where its code is
    slower than the next bound (an AMD launch that spills runs ten times slower than its bound), that one is
    compiled too, and the faster of the two is measured."""
    from pystencils_perf.tune.replay import CompileBeforeMeasuring
    from pystencils_perf.tune.tuner import Candidate, FirstMeasurement

    spec = load_tunable_spec(SPEC)
    every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
    too_many = _failing()
    ran = sorted(
        (c for c in every.candidates if params_key(c.params) not in too_many), key=lambda c: c.predicted_seconds
    )
    fast, slow = ran[0], ran[-1]
    assert slow.predicted_seconds > 1.5 * fast.predicted_seconds
    bounds = [Candidate(slow.params, 0.5 * fast.predicted_seconds, exact=False),
              Candidate(fast.params, 0.9 * fast.predicted_seconds, exact=False)]  # fmt: skip
    gpu = TimesOf(every, too_many)
    first = FirstMeasurement(gpu, CompileBeforeMeasuring(spec, "A100"))
    first(bounds)
    assert gpu.measured == [params_key(fast.params)]


def test_tune_replay_rejects_a_launch_left_uncompiled_once_it_is_compiled(narrow_blocks, monkeypatch, tmp_path, capsys):
    """`pystencils-perf tune --replay` (every candidate measured): the launches whose code cannot run (blocks at most
    64 wide, as the stand-in compiler says) are never measured; those the ordered compile left uncompiled are
    rejected as the search comes to them, listed in the JSON, and named on the `best:` line."""
    import functools
    import json

    from pystencils_perf import cli
    from pystencils_perf.tune import tuner

    monkeypatch.setattr(tuner, "tune", functools.partial(tuner.tune, early_stop=False))
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(tmp_path))
    root = Path(__file__).resolve().parents[1]
    cache = root / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
    spec = root / "validation/a100_convolution/convolution_tile1x1.py"
    out = tmp_path / "tuned.json"
    args = ["tune", str(spec), "--device", "RTX-A4000", "--replay", str(cache), "--budget", "200", "--jobs", "1"]
    assert cli.main([*args, "--json", str(out)]) == 0
    tuned = json.loads(out.read_text())
    measured = [m["params"] for m in tuned["measured"]]
    rejected = [r["params"] for r in tuned["rejected_once_compiled"]]
    assert len(measured) == tuned["candidates"] == 80  # of 120: the 40 blocks at most 64 wide cannot run
    assert rejected and all(NarrowBlocksOutOfSharedMemory.fails(p) for p in rejected)
    assert not any(NarrowBlocksOutOfSharedMemory.fails(p) for p in measured)
    assert (
        f"80 of 80 candidates measured, 80 by this call, {len(rejected)} rejected once compiled"
        in capsys.readouterr().out
    )
