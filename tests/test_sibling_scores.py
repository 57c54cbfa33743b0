"""validation/default_model.py's comparison with another GPU's measurements: what a perfect model of that GPU scores."""

import gzip
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))

import default_model  # noqa: E402


def _pair(variant, block, measured_glups, predicted_glups, relative_error=0.05):
    return SimpleNamespace(
        variant=variant,
        launch=block,
        measured=SimpleNamespace(values={"glups": measured_glups}),
        candidate=SimpleNamespace(prediction=SimpleNamespace(glups=predicted_glups, relative_error=relative_error)),
    )


def test_a_sibling_that_measured_the_same_order_ranks_perfectly_and_one_that_reversed_it_does_not():
    pairs = [
        _pair("read_only=0", b, g, p)
        for b, g, p in (("16x1x1", 10.0, 9.0), ("32x1x1", 20.0, 21.0), ("64x1x1", 30.0, 25.0), ("80x1x1", 5.0, 6.0))
    ]
    same = {("read_only=0", "16x1x1"): 1.0, ("read_only=0", "32x1x1"): 2.0, ("read_only=0", "64x1x1"): 3.0}
    row = default_model.sibling_row("X", pairs, 0.99, "Y", same)
    assert row.rows == 3  # 80x1x1 was not measured by the sibling: left out of both scores
    assert row.sibling_spearman == pytest.approx(1.0) and row.sibling_best_fraction == 1.0
    assert row.model_spearman == pytest.approx(1.0) and row.model_best_fraction == 1.0
    reversed_order = {k: 4.0 - v for k, v in same.items()}
    row = default_model.sibling_row("X", pairs, 0.99, "Y", reversed_order)
    assert row.sibling_spearman == pytest.approx(-1.0) and row.sibling_best_fraction == pytest.approx(10.0 / 30.0)


def test_the_halves_of_repeated_runs_rank_a_cache_against_itself(tmp_path):
    """First half against second half of each launch's runs: a GPU whose runs agree ranks itself at 1, one whose
    second halves reverse the order at -1."""

    def cache(second_half):
        entries = {
            str(i): {"time": 1.0, "times": [t] * 4 + [second_half(t)] * 4} for i, t in enumerate((1.0, 2.0, 3.0))
        }
        path = tmp_path / "cache.json.gz"
        with gzip.open(path, "wt") as fh:
            json.dump({"cache": entries}, fh)
        return path

    assert default_model.halves_spearman(cache(lambda t: t)) == pytest.approx(1.0)
    assert default_model.halves_spearman(cache(lambda t: 4.0 - t)) == pytest.approx(-1.0)


def test_our_own_sets_give_their_measured_throughputs_and_their_timing_again():
    """A held-out Hopper set: every measured launch by ("", launch), as its pairs name them; a set timed twice ranks
    itself again near 1, one timed once (its noise borrowed from another kernel's rerun) has no such figure."""
    sets = {d.name: d for d in default_model.HELD_OUT_DATA_SETS}
    star = sets["H200 star r=4"]
    throughputs = star.throughputs()
    rows = default_model.read_dataset(default_model.REPO / star.source).rows
    assert throughputs == {("", r.launch): r.values["glups"] for r in rows} and len(throughputs) == 160
    assert 0.9 < star.self_spearman() <= 1.0
    assert sets["H100 star r=1"].self_spearman() is None
    assert default_model.SIBLINGS["H100 star r=1"] == ("H200 star r=1",)


def _volume_pair(variant, block, measured_dram_load, predicted_dram_load):
    metrics = SimpleNamespace(dram_load_bytes_per_lup=predicted_dram_load)
    measured = SimpleNamespace(values={"dram_load": measured_dram_load})
    return SimpleNamespace(variant=variant, launch=block, measured=measured, candidate=SimpleNamespace(metrics=metrics))


def test_a_volume_set_read_twice_pairs_the_launches_that_differ_only_in_the_parameter():
    """KTT's READ_ONLY 0 and 1 load the same input: each launch's two readings are its repeat, and one whose other
    setting was not read (it spilled, say) has none."""
    pairs = [
        _volume_pair(f"READ_ONLY={r} TILE_SIZE_X={t}", b, m, p)
        for r, t, b, m, p in (
            (0, 1, "2x32x1", 4.03, 4.0),
            (1, 1, "2x32x1", 4.05, 4.0),
            (0, 2, "2x32x1", 4.10, 4.2),
            (1, 2, "2x32x1", 4.11, 4.2),
            (0, 1, "4x32x1", 4.20, 4.3),
            (1, 1, "4x32x1", 4.20, 4.3),
            (0, 3, "4x32x1", 4.50, 4.4),
        )
    ]
    twice = default_model.counters_twice(pairs, "READ_ONLY")
    assert sorted((p.variant, q.variant, p.launch) for p, q in twice) == [
        ("READ_ONLY=0 TILE_SIZE_X=1", "READ_ONLY=1 TILE_SIZE_X=1", "2x32x1"),
        ("READ_ONLY=0 TILE_SIZE_X=1", "READ_ONLY=1 TILE_SIZE_X=1", "4x32x1"),
        ("READ_ONLY=0 TILE_SIZE_X=2", "READ_ONLY=1 TILE_SIZE_X=2", "2x32x1"),
    ]
    # spreads 0.496 %, 0.244 %, 0 %: median / 90th percentile
    assert default_model.counter_noise(twice) == "0.24 / 0.45 %"
    data = SimpleNamespace(name="KTT", same_volumes_parameter="READ_ONLY")
    row = default_model.repeat_row(data, pairs)
    assert row[:4] == ("KTT", "READ_ONLY 0 against 1", "3", "1.000") and row[5] == "1.000"


def test_the_scaling_table_sets_each_tiles_measured_ratio_beside_the_predicted_one():
    """Per tile and read_only setting: the geometric mean over the launches both GPUs measured of the larger GPU's
    throughput over the smaller's, measured and predicted; a launch only one of them measured is left out."""
    tile = "read_only={} tile_size_x=1 tile_size_y=2"
    larger = [
        _pair(tile.format(0), "32x1x1", 2.0, 1.75),
        _pair(tile.format(0), "64x1x1", 8.0, 3.5),
        _pair(tile.format(1), "32x1x1", 3.0, 3.0),
        _pair(tile.format(1), "64x1x1", 9.0, 9.0),
    ]
    smaller = [
        _pair(tile.format(0), "32x1x1", 1.0, 1.0),
        _pair(tile.format(0), "64x1x1", 2.0, 2.0),
        _pair(tile.format(1), "32x1x1", 2.0, 2.0),
    ]
    only_plain = "read_only=0 tile_size_x=3 tile_size_y=4"
    larger.append(_pair(only_plain, "32x1x1", 1.0, 1.0))
    smaller.append(_pair(only_plain, "32x1x1", 1.0, 1.0))
    table = default_model.scaling_table(larger, smaller).splitlines()
    assert table[0].startswith("| tile | launches, read_only 0 | measured | predicted | launches, read_only 1")
    assert table[2] == "| 1x2 | 2 | 2.83 | 1.75 | 1 | 1.50 | 1.50 |"  # sqrt(2 x 4); 1.75 both; 64x1x1 of 1 unpaired
    assert table[3] == "| 3x4 | 1 | 1.00 | 1.00 | 0 | - | - |"
