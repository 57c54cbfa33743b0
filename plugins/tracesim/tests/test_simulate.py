"""The simulation against exact counts and the DRAM bandwidth; the opt-in hook; errors."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pystencils as ps
import pytest
import sympy as sp
from pystencils_perf_tracesim import SimulationOptions, simulate
from pystencils_perf_tracesim.plugin import perf_models, perf_predict

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d
from pystencils_perf.errors import PerfError
from pystencils_perf.kernel import BDIM, BID, TID


@pytest.fixture(scope="module")
def star_small():
    return pp.harvest(star_3d(1, (30, 20, 12)), align="interior")


@pytest.fixture(scope="module")
def huge_cache_v100():
    """Caches that never evict: every volume is compulsory."""
    return dataclasses.replace(pp.get_device("V100"), l1_capacity_bytes=2**30, l2_effective_capacity_bytes=2**34)


def _brute_force_sectors(model, block, kind):
    """Per launched block, per warp and instruction, the 32-B sectors its active lanes touch (by sympy, not by the
    simulator's affine compilation): {(block id, warp, access index): set of (field, sector)}."""
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    t = np.arange(int(np.prod(block)))
    tid = [t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])]
    fields = {f.name: f for f in model.fields}
    symbols = [*TID, *BID, *BDIM]
    accesses = [
        (acc, sp.lambdify(symbols, acc.address, "numpy"), sp.lambdify(symbols, acc.predicate, "numpy"))
        for acc in model.accesses
        if acc.kind.value == kind
    ]
    out = {}
    for linear in range(int(np.prod(grid))):
        bid = [linear % grid[0], (linear // grid[0]) % grid[1], linear // (grid[0] * grid[1])]
        values = [*tid, *(np.full_like(t, v) for v in bid), *block]
        for i, (acc, address_of, predicate_of) in enumerate(accesses):
            address = address_of(*values)
            active = np.broadcast_to(predicate_of(*values), t.shape)
            f = fields[acc.field]
            sectors = (f.base_offset_bytes + f.element_bytes * np.broadcast_to(address, t.shape)) // 32
            for lane in np.flatnonzero(active):
                out.setdefault((linear, lane // 32, i), set()).add((acc.field, int(sectors[lane])))
    return out


def test_compulsory_volumes_equal_an_exact_count(star_small, huge_cache_v100):
    block = (8, 4, 4)
    r = simulate(star_small, pp.LaunchConfig(block), huge_cache_v100)
    assert r.wave_blocks == 60 and r.simulated_waves == 1  # the whole grid in one wave, one block per SM
    lups = 30 * 20 * 12
    loads = _brute_force_sectors(star_small, block, "load")
    stores = _brute_force_sectors(star_small, block, "store")
    dram_load = len(set().union(*loads.values()))
    per_block = {}
    for (linear, _, _), sectors in loads.items():
        per_block.setdefault(linear, set()).update(sectors)
    l2_load = sum(len(s) for s in per_block.values())  # each block on its own SM: its L1 misses every sector once
    assert r.dram_load_bytes_per_lup == pytest.approx(32 * dram_load / lups)
    assert r.l2_load_bytes_per_lup == pytest.approx(32 * l2_load / lups)
    assert r.dram_store_bytes_per_lup == pytest.approx(32 * len(set().union(*stores.values())) / lups)
    assert r.l2_store_bytes_per_lup == pytest.approx(32 * sum(len(s) for s in stores.values()) / lups)
    assert r.dram_load_bytes_per_lup > 8.0  # halos and partial sectors on top of the 8 B/Lup minimum


def test_a_small_l2_turns_reuse_into_dram_traffic(star_small, huge_cache_v100):
    tiny_l2 = dataclasses.replace(huge_cache_v100, l2_effective_capacity_bytes=4 * 128, l1_capacity_bytes=4 * 128)
    big = simulate(star_small, pp.LaunchConfig((8, 4, 4)), huge_cache_v100)
    small = simulate(star_small, pp.LaunchConfig((8, 4, 4)), tiny_l2)
    assert small.dram_load_bytes_per_lup > 1.5 * big.dram_load_bytes_per_lup
    assert small.l2_load_bytes_per_lup > 1.5 * big.l2_load_bytes_per_lup


@pytest.fixture(scope="module")
def copy_kernel():
    src, dst = ps.fields("src, dst: double[64, 128, 256]")
    return pp.harvest([ps.Assignment(dst.center, src.center)])


@pytest.mark.parametrize("name", ["V100", "A100", "H100", "L40S"])
def test_streaming_kernel_converges_to_dram_bandwidth(copy_kernel, name):
    device = pp.get_device(name)
    r = simulate(copy_kernel, pp.LaunchConfig((256, 4, 1)), device)
    assert (r.dram_load_bytes_per_lup, r.dram_store_bytes_per_lup) == (8.0, 8.0)
    assert r.limiter == "DRAM"
    achieved_gbs = r.lups_per_second * 16 / 1e9
    assert 0.9 * device.dram_bandwidth_gbs <= achieved_gbs <= device.dram_bandwidth_gbs


def test_eq8_scales_one_round_to_the_kernel(copy_kernel):
    r = simulate(copy_kernel, pp.LaunchConfig((256, 4, 1)), "V100")
    device = pp.get_device("V100")
    rounds = -(-int(np.prod(r.grid)) // device.sm_count) / r.blocks_per_sm
    assert r.kernel_seconds == pytest.approx(r.pipeline_cycles * rounds / (device.clock_ghz * 1e9))
    assert r.seconds_per_lup == pytest.approx(r.kernel_seconds / (256 * 128 * 64))


def test_folding_shares_loads_between_points(star_small, huge_cache_v100):
    unfolded = simulate(star_small, pp.LaunchConfig((8, 4, 4)), huge_cache_v100)
    folded = simulate(star_small, pp.LaunchConfig((8, 4, 2), (1, 1, 2)), huge_cache_v100)
    assert folded.l1_cycles_per_lup < unfolded.l1_cycles_per_lup  # 2 points share the loads of z offsets 0 and 1
    assert folded.dram_load_bytes_per_lup == unfolded.dram_load_bytes_per_lup  # the same data, compulsory


def test_hook_is_opt_in(star_small):
    launch = pp.LaunchConfig((8, 4, 4))
    assert perf_predict(star_small, launch, pp.get_device("V100"), None, SimpleNamespace(model="limiters")) is None
    prediction = perf_predict(star_small, launch, pp.get_device("V100"), None, SimpleNamespace(model="tracesim"))
    assert prediction.seconds_per_lup["simulated"] == pytest.approx(1 / prediction.lups_per_second)
    assert prediction.limiter in prediction.seconds_per_lup
    assert "tracesim" in perf_models()


def test_errors_name_the_problem(star_small):
    with pytest.raises(PerfError, match="no latency table for architecture 'cdna2'"):
        simulate(star_small, pp.LaunchConfig((8, 4, 4)), "MI210")
    with pytest.raises(PerfError, match="measured_waves >= 1"):
        SimulationOptions(measured_waves=0)
    folded = star_small.folded((1, 2, 1))
    with pytest.raises(PerfError, match=r"folded \(1, 2, 1\), the launch asks for \(1, 1, 2\)"):
        simulate(folded, pp.LaunchConfig((8, 4, 4), (1, 1, 2)), "V100")


def test_rank_uses_the_simulation_only_when_asked(star_small):
    launch = pp.LaunchConfig((8, 4, 4))
    simulated = pp.rank(star_small, "V100", blocks=[launch.block], folds=[launch.fold], model="tracesim").best
    assert simulated.prediction.lups_per_second == pytest.approx(simulate(star_small, launch, "V100").lups_per_second)
    default = pp.rank(star_small, "V100", blocks=[launch.block], folds=[launch.fold]).best
    assert "simulated" not in default.prediction.seconds_per_lup
