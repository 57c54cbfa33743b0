"""Spilled registers cost memory traffic, down to the level that holds the spilled values."""

from dataclasses import replace

import pytest

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d_assignments
from pystencils_perf.devices import get_device
from pystencils_perf.estimate.spills import spill_traffic
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.resources import ResourceUsage, with_launch_resources, with_resources

A100 = get_device("A100")


@pytest.mark.parametrize(
    "spill_bytes, threads_per_sm, level",
    [
        (100, 256, "L1"),  # 25.6 kB per SM: fits A100's 192 kB L1
        (1000, 256, "L2"),  # 256 kB per SM, 27.6 MB over 108 SMs: fits the 29 MB of L2 it can use
        (1000, 1024, "DRAM"),  # 110 MB over all SMs
    ],
)
def test_spills_stay_in_the_level_that_holds_them(spill_bytes, threads_per_sm, level):
    traffic = spill_traffic(spill_bytes, 2 * spill_bytes, spill_bytes, 4.0, threads_per_sm, A100)
    assert traffic.level == level
    assert (traffic.load_bytes_per_lup, traffic.store_bytes_per_lup) == (spill_bytes / 2, spill_bytes / 4)
    assert traffic.reaching("L2") == ((0.0, 0.0) if level == "L1" else (spill_bytes / 2, spill_bytes / 4))
    assert traffic.reaching("DRAM") == ((spill_bytes / 2, spill_bytes / 4) if level == "DRAM" else (0.0, 0.0))


def test_the_bytes_a_thread_keeps_spilled_decide_the_level_not_its_traffic():
    """A value stored ten times takes one slot: 100 B kept by 256 threads fit in L1, though 1000 B are stored."""
    traffic = spill_traffic(1000, 1000, 100, 4.0, 256, A100)
    assert traffic.level == "L1" and traffic.store_bytes_per_lup == 250


def test_no_spills_no_traffic():
    assert spill_traffic(0, 0, 0, 1.0, 2048, A100).bytes_per_lup == 0.0


def test_a_launch_whose_code_spills_is_priced_for_its_traffic():
    """Two blocks of the same 7-point star; the code of one spills 2 kB per thread (say, compiled for that
    block): its DRAM volume grows by the spill bytes per update and its predicted throughput drops."""
    model = pp.harvest(star_3d_assignments(1, (256, 64, 64)))
    spilling, clean = LaunchConfig((64, 4, 1), (1, 1, 1)), LaunchConfig((32, 8, 1), (1, 1, 1))
    resources = {
        spilling: ResourceUsage("sm_80", 255, 2048, 2048, 0, "test"),
        clean: ResourceUsage("sm_80", 32, 0, 0, 0, "test"),
    }
    ranked = pp.rank(
        with_launch_resources(model, resources),
        "A100",
        blocks=[spilling.block, clean.block],
        folds=[(1, 1, 1)],
        compile_resources=False,
    )
    by_block = {c.launch.block: c for c in ranked.candidates}
    heavy, light = by_block[spilling.block], by_block[clean.block]
    assert heavy.metrics.registers_per_thread == 255 and heavy.metrics.blocks_per_sm == 1
    assert heavy.metrics.spill_level == "DRAM" and light.metrics.spill_level == ""
    assert heavy.metrics.spill_load_bytes_per_lup == heavy.metrics.spill_store_bytes_per_lup == 2048
    unspilled = pp.rank(
        with_launch_resources(model, {spilling: replace(resources[spilling], spill_store_bytes=0, spill_load_bytes=0)}),
        "A100",
        blocks=[spilling.block],
        folds=[(1, 1, 1)],
        compile_resources=False,
    ).best
    assert heavy.metrics.dram_load_bytes_per_lup == pytest.approx(unspilled.metrics.dram_load_bytes_per_lup + 2048)
    assert heavy.prediction.glups < unspilled.prediction.glups / 10
    assert ranked.best.launch == clean


def test_a_fold_whose_code_spills_is_priced_for_its_traffic():
    """pystencils compiles its kernel once per fold (the block is a launch parameter): where the code of a fold
    spills, every launch with that fold pays the traffic, 2 kB stored and loaded per thread over the 2 points it
    updates; the unfolded code does not spill and pays nothing."""
    model = pp.harvest(star_3d_assignments(1, (256, 64, 64)))
    resources = {
        (1, 1, 1): ResourceUsage("sm_80", 32, 0, 0, 0, "test"),
        (1, 2, 1): ResourceUsage("sm_80", 255, 2048, 2048, 0, "test"),
    }
    ranked = pp.rank(
        with_resources(model, resources), "A100", blocks=[(64, 4, 1)], folds=list(resources), compile_resources=False
    )
    by_fold = {c.launch.fold: c.metrics for c in ranked.candidates}
    folded, unfolded = by_fold[(1, 2, 1)], by_fold[(1, 1, 1)]
    assert folded.spill_load_bytes_per_lup == folded.spill_store_bytes_per_lup == 1024
    assert folded.spill_level == "DRAM" and unfolded.spill_level == ""
    assert unfolded.spill_load_bytes_per_lup == unfolded.spill_store_bytes_per_lup == 0
    assert folded.dram_load_bytes_per_lup > unfolded.dram_load_bytes_per_lup + 1024
    assert ranked.best.launch.fold == (1, 1, 1)
