"""Ryoo et al. (CGO'08): the paper's numbers computed by the code, the Pareto filter, the ``ryoo`` prune hook."""

import random

import pytest

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d
from pystencils_perf.errors import ConfigurationError, PerfError
from pystencils_perf_ryoo import (
    RyooInputs,
    g80_occupancy,
    g80_parameters,
    g80_peak_gflops,
    instructions_per_thread,
    pareto_filter,
    prune_candidates,
    ryoo_metrics,
)
from pystencils_perf_ryoo.metrics import RyooMetrics
from pystencils_perf_ryoo.paper import TiledMatmul


def test_g80_peak_is_the_papers_388_8_gflops():
    assert g80_peak_gflops() == pytest.approx(388.8)


def test_matmul_example_sec4():
    mm = TiledMatmul()
    occ = mm.occupancy()
    m = mm.metrics()
    assert (occ.blocks_per_sm, occ.limited_by) == (2, "registers")
    assert m.inputs.warps_per_block == 8
    assert m.inputs.regions_per_thread == 769
    assert m.inputs.threads == 2**24
    assert f"{m.efficiency:.3e}" == "3.934e-12" and f"{m.efficiency:.2e}" == "3.93e-12"
    assert round(m.utilization, 2) == 226.56 and round(m.utilization) == 227


@pytest.mark.parametrize(
    "threads, registers, smem, blocks, limited_by",
    [
        (256, 10, 4096, 3, "threads"),  # sec. 2.2: 3 blocks, 768 threads
        (256, 11, 4096, 2, "registers"),  # a third block would need 8448 > 8192 registers
        (256, 10, 5120, 3, "threads"),  # +1 KB shared memory: still 3
        (64, 13, 1024, 8, "blocks"),  # sec. 3.2: 8x8 tiles (64 threads) -> 8 blocks
        (256, 13, 2088, 2, "registers"),  # sec. 4: smem would allow 7, threads 3
    ],
)
def test_g80_occupancy_examples(threads, registers, smem, blocks, limited_by):
    occ = g80_occupancy(threads, registers, smem)
    assert (occ.blocks_per_sm, occ.limited_by) == (blocks, limited_by)


def test_g80_occupancy_step_at_11_registers():
    assert 3 * 256 * 11 == 8448 > g80_parameters()["registers_per_sm"]
    assert g80_occupancy(256, 10, 4096).blocks_per_sm - g80_occupancy(256, 11, 4096).blocks_per_sm == 1


@pytest.mark.parametrize(
    "args, message",
    [
        ((1024, 10, 0), "1024 threads per block exceed"),
        ((256, 0, 0), "registers per thread must be a positive integer"),
        ((512, 17, 0), "does not fit on one GeForce 8800 GTX SM (registers)"),
        ((256, 10, 20000), "does not fit on one GeForce 8800 GTX SM (shared memory)"),
    ],
)
def test_g80_occupancy_refuses_what_cannot_run(args, message):
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        g80_occupancy(*args)


def test_inputs_name_the_bad_parameter():
    with pytest.raises(PerfError, match="blocks per SM must be a positive integer, got 0"):
        RyooInputs(100, 1, 1024, 8, 0)


def _m(e, u):
    return RyooMetrics(e, u, None)


def test_pareto_keeps_the_front_and_duplicates_and_names_a_dominator():
    items = ["a", "b", "c", "d", "e", "f"]
    metrics = [_m(3, 1), _m(2, 2), _m(1, 3), _m(1, 2), _m(2, 2), _m(3, 0.5)]
    result = pareto_filter(items, metrics)
    assert result.survivors == ["a", "b", "c", "e"]  # b and e are exact duplicates: both kept
    by = {d.item: d.by for d in result.dominated}
    assert by == {"d": "b", "f": "a"}  # d: (1, 2) <= (2, 2); f: equal Efficiency, less Utilization
    assert (
        "Ryoo-dominated: Efficiency 1, Utilization 2 <= Efficiency 2, Utilization 2 of b" in result.dominated[0].reason
    )
    assert result.reduction == pytest.approx(2 / 6)


def test_pareto_equals_brute_force_on_random_points_with_ties():
    rng = random.Random(7)
    metrics = [_m(rng.randint(1, 8), rng.randint(1, 8)) for _ in range(300)]
    result = pareto_filter(list(range(300)), metrics)

    def dominated(p):
        return any(
            q.efficiency >= p.efficiency
            and q.utilization >= p.utilization
            and (q.efficiency > p.efficiency or q.utilization > p.utilization)
            for q in metrics
        )

    assert result.survivors == [i for i, p in enumerate(metrics) if not dominated(p)]
    for d in result.dominated:
        q, p = d.by_metrics, d.metrics
        assert (
            q.efficiency >= p.efficiency
            and q.utilization >= p.utilization
            and (q.efficiency, q.utilization) != (p.efficiency, p.utilization)
        )


@pytest.fixture(scope="session")
def star_r2():
    return pp.harvest(star_3d(radius=2, domain=(64, 64, 64)))


def test_instructions_per_thread_from_the_kernel_model(star_r2):
    flops = star_r2.flops_per_lup
    assert flops > 0
    assert instructions_per_thread(star_r2) == 13 + 1 + flops  # 13 loads, one store
    # folded 4x in z: the z line of 4 points needs offsets -2..5 (8 loads) + 4 x 8 off-line loads; 4 stores
    assert instructions_per_thread(star_r2.folded((1, 1, 4))) == 8 + 4 * 8 + 4 + 4 * flops


def test_ryoo_metrics_reward_folding_on_equal_occupancy():
    one = ryoo_metrics(RyooInputs(45, 1, 1024 * 100, 32, 2))
    folded = ryoo_metrics(RyooInputs(2 * 40, 1, 512 * 100, 32, 2))
    assert folded.efficiency > one.efficiency and folded.utilization > one.utilization


BLOCKS = [(32, 4, 8), (64, 4, 4), (8, 8, 16), (16, 16, 4)]
FOLDS = [(1, 1, 1), (1, 1, 2), (1, 2, 1)]


@pytest.fixture(scope="session")
def rankings(star_r2):
    plain = pp.rank(star_r2, "V100", blocks=BLOCKS, folds=FOLDS)
    pruned = pp.rank(star_r2, "V100", blocks=BLOCKS, folds=FOLDS, prune=("ryoo",))
    return plain, pruned


def test_prune_hook_drops_exactly_the_dominated_candidates(star_r2, rankings):
    plain, pruned = rankings
    expected = prune_candidates(star_r2, plain.candidates)
    assert 0 < len(expected.survivors) < len(plain.candidates)
    assert [c.launch for c in pruned.candidates] == [c.launch for c in expected.survivors]
    dropped = {launch: reason for launch, reason in pruned.rejected if reason.startswith("Ryoo-dominated")}
    assert set(dropped) == {d.item.launch for d in expected.dominated}
    assert all(" of " in reason for reason in dropped.values())


def test_installed_filter_changes_nothing_unless_asked(rankings):
    plain, _ = rankings
    assert not any("Ryoo" in reason for _, reason in plain.rejected)
    assert len(plain.candidates) == len(BLOCKS) * len(FOLDS)


def test_unknown_filter_name_is_refused(star_r2):
    with pytest.raises(ConfigurationError, match="unknown candidate filter 'ryo'.*ryoo"):
        pp.rank(star_r2, "V100", blocks=BLOCKS[:1], prune=("ryo",))
