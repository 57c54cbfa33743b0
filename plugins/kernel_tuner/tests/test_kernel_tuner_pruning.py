"""Pruning a kernel_tuner search space with a ranking: no GPU needed."""

import importlib.util
import re
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-kt-test-")

import pytest  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import star_3d  # noqa: E402
from pystencils_perf.launch import LaunchConfig  # noqa: E402
from pystencils_perf_kernel_tuner import TunableKernel, prune  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tune_star3d.py"
TUNE_PARAMS = {
    "block_size_x": [16, 32, 64],
    "block_size_y": [1, 2, 4, 8],
    "block_size_z": [1, 2, 4],
    "tile_size_z": [1, 2],
    "use_ldg": [0, 1],  # not modelled: passes through
}
FOLD = {"tile_size_z": "z"}


@pytest.fixture(scope="module")
def kernel():
    return star_3d(1, (128, 64, 64))


@pytest.fixture(scope="module")
def pruned(kernel):
    return prune(kernel, TUNE_PARAMS, "V100", top_k=5, fold_params=FOLD)


def test_keeps_the_models_top_launches_in_order(kernel, pruned):
    ranking = pp.rank(
        kernel,
        "V100",
        blocks=sorted({launch.block for launch in pruned.space.launches()}),
        folds=[(1, 1, 1), (1, 1, 2)],
    )
    assert list(pruned.kept) == [c.launch for c in ranking.candidates[:5]]
    assert len(pruned.space.launches()) == 3 * 4 * 3 * 2 and pruned.space.size == 3 * 4 * 3 * 2 * 2


def test_configurations_are_the_kept_launches_times_the_other_parameters(pruned):
    configs = pruned.configurations
    assert len(configs) == 5 * 2
    assert [list(c) for c in configs] == [list(TUNE_PARAMS)] * 10  # kernel_tuner's parameter order
    assert [pruned.space.launch(c) for c in configs[::2]] == list(pruned.kept)
    assert [c["use_ldg"] for c in configs[:2]] == [0, 1]


def test_restriction_accepts_exactly_the_kept_configurations_however_called(pruned):
    keep = pruned.restriction
    kept = {tuple(c.values()) for c in pruned.configurations}
    names = list(TUNE_PARAMS)
    for bx in TUNE_PARAMS["block_size_x"]:
        for by in TUNE_PARAMS["block_size_y"]:
            for bz in TUNE_PARAMS["block_size_z"]:
                for tile in TUNE_PARAMS["tile_size_z"]:
                    combo = (bx, by, bz, tile, 1)
                    params = dict(zip(names, combo))
                    expected = combo in kept
                    assert keep(params) is expected and keep(**params) is expected and keep(*combo) is expected


def test_kernel_tuner_search_space_with_the_restriction_is_the_kept_set(pruned):
    searchspace = pytest.importorskip("kernel_tuner.searchspace")
    space = searchspace.Searchspace(TUNE_PARAMS, pruned.restrictions, 1024)
    assert set(space.list) == {tuple(c.values()) for c in pruned.configurations}


def test_within_keeps_launches_close_to_the_best(kernel):
    pruned = prune(kernel, TUNE_PARAMS, "V100", top_k=None, within=0.01, fold_params=FOLD)
    by_launch = {c.launch: c.prediction.lups_per_second for c in pruned.ranking.candidates}
    best = pruned.ranking.best.prediction.lups_per_second
    assert all(by_launch[launch] >= 0.99 * best for launch in pruned.kept)
    assert all(by_launch[launch] < 0.99 * best for launch in set(by_launch) - set(pruned.kept))
    assert 1 < len(pruned.kept) < len(by_launch)


def test_launches_that_cannot_run_are_reported_not_kept(kernel):
    params = {"block_size_x": [64, 1024], "block_size_y": [1, 16]}
    pruned = prune(kernel, params, "V100", top_k=None)
    assert set(pruned.kept) == {LaunchConfig((64, 1, 1)), LaunchConfig((64, 16, 1))}
    reasons = dict(pruned.ranking.rejected)
    assert "16384 threads per block exceed" in reasons[LaunchConfig((1024, 16, 1))]
    assert "threads would idle" in reasons[LaunchConfig((1024, 1, 1))]
    assert "block_size_x=1024, block_size_y=1: block x = 1024 exceeds the 128 threads" in pruned.report()


def test_the_plugin_applies_a_choice_as_kernel_tuner_parameters(kernel, pruned):
    chosen = pruned.ranking.best  # the configurations are in ranking order
    params = pp.get_plugin_manager().hook.perf_apply(
        kernel=TunableKernel(kernel, pruned.space), launch=chosen.launch, options=None
    )
    assert params == {k: v for k, v in pruned.configurations[0].items() if k != "use_ldg"}


MALFORMED = {
    "no block_size_x": (dict(tune_params={"block_size_y": [1, 2]}), "tune_params has no 'block_size_x'"),
    "fold parameter missing": (dict(fold_params={"tile": "z"}), "folding parameter 'tile' is not in tune_params"),
    "fold axis": (
        dict(tune_params={"block_size_x": [32], "tile": [1, 2]}, fold_params={"tile": "w"}),
        "folding parameter 'tile': axis must be 'x', 'y' or 'z', got 'w'",
    ),
    "non-integer block": (
        dict(tune_params={"block_size_x": [32, "64"]}),
        "tune_params['block_size_x']: '64' is not a positive integer",
    ),
    "empty values": (dict(tune_params={"block_size_x": []}), "tune_params['block_size_x'] must be a non-empty list"),
    "top_k": (dict(top_k=0), "top_k must be a positive integer or None"),
    "within": (dict(within=1.5), "within must be a fraction in [0, 1)"),
    "within as text": (dict(within="0.1"), "within must be a fraction in [0, 1), got '0.1'"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_input_is_named(kernel, case):
    change, message = MALFORMED[case]
    arguments = dict(tune_params={"block_size_x": [32, 64]}) | change
    with pytest.raises(pp.ConfigurationError, match=re.escape(message)):
        prune(kernel, device="V100", **arguments)


def test_unknown_kernel_is_a_harvest_error():
    with pytest.raises(pp.HarvestError, match="no adapter plugin recognises the tuned kernel, a dict"):
        prune({"not": "a kernel"}, {"block_size_x": [32]}, "V100")


def _example():
    spec = importlib.util.spec_from_file_location("tune_star3d_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_dry_run_prints_the_pruned_space(monkeypatch, capsys):
    pytest.importorskip("pystencils_perf_cuda")
    example = _example()
    monkeypatch.setattr(
        example,
        "TUNE_PARAMS",
        {"block_size_x": [32, 64], "block_size_y": [2, 4], "block_size_z": [4, 8], "tile_size_z": [1, 2]},
    )
    example.main(["--dry-run", "--domain", "64x32x32", "--top-k", "3"])
    out = capsys.readouterr().out
    assert "star3d_r4 on V100-PCIe-32GB: tune_params spans 16 configurations" in out
    assert "the model keeps 3 configurations (3 launches)" in out and "pruning took" in out


def test_example_description_loads_what_star3d_cu_loads():
    """star3d.cu loads the column a tile shares once: (tile + 2R) + 4R*tile loads, as the folded model."""
    pytest.importorskip("pystencils_perf_cuda")
    from pystencils_perf.estimate.addresses import compile_kernel

    model = pp.harvest(_example().described((64, 32, 32)))
    for tile in (1, 2, 4):
        instructions = compile_kernel(model.folded((1, 1, tile)), (32, 4, 2)).instructions
        loads = [i for i in instructions if i.kind is pp.AccessKind.LOAD]
        assert len(loads) == (tile + 2 * 4) + 4 * 4 * tile
