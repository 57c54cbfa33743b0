"""`spec_candidates(..., compile_until_certain=N)`: the launches that can be fastest are compiled first, and only
until the N fastest are certain; their times and order are those of compiling every launch."""

from __future__ import annotations

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


@pytest.fixture
def tile_registers():
    plugin = TileRegisters()
    pm = get_plugin_manager()
    pm.register(plugin, name="test-tile-registers")
    yield plugin
    pm.unregister(plugin)


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
    plugin = OtherTilesRegisters(f"{first['tile_size_x']}x{first['tile_size_y']}")
    pm = get_plugin_manager()
    pm.register(plugin, name="test-other-tiles-registers")
    try:
        every = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1)
        plugin.asked.clear()
        ordered = spec_candidates(CONFIGURATIONS, spec, "A100", jobs=1, compile_until_certain=20)
    finally:
        pm.unregister(plugin)
    assert plugin.asked  # 15 of the 45 launches are the skipped variant's: the 20 fastest need others compiled
    fastest, fastest_ordered = (sorted(t, key=t.get)[:20] for t in (_times(every), _times(ordered)))
    assert fastest_ordered == fastest
