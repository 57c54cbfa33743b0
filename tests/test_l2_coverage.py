"""Whether a wave finds the previous wave's halo in L2: the coverage counts the lines both waves' stores allocate."""

import pytest

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d
from pystencils_perf.estimate import footprint_enum, footprint_isl
from pystencils_perf.estimate.addresses import compile_kernel
from pystencils_perf.estimate.footprint_enum import ThreadSet
from pystencils_perf.estimate.volumes import FootprintCounter
from pystencils_perf.kernel import BDIM, BID, TID, Access, AccessKind, Field, KernelModel


def copy_model(store_field: str, store_shift: int = 0, n: int = 4096) -> KernelModel:
    """``store_field[x + store_shift] = A[x]``: a copy into another field, or an update in place."""
    gx = BID[0] * BDIM[0] + TID[0]
    fields = tuple(Field(name, 8, (n + 64,), (1,)) for name in sorted({"A", store_field}))
    accesses = (Access("A", AccessKind.LOAD, gx), Access(store_field, AccessKind.STORE, gx + store_shift))
    return KernelModel("copy", fields, accesses, (n, 1, 1), 0)


@pytest.mark.parametrize("backend", [footprint_enum, footprint_isl])
@pytest.mark.parametrize(
    "store_field, store_shift, expected_lines",
    [
        ("B", 0, 32),  # another field: 128 doubles = 32 lines of 32 B, none of them loaded
        ("A", 0, 0),  # in place: the stores write the lines the loads brought in
        ("A", 8, 2),  # in place, shifted by 8 doubles: 2 lines lie beyond the loaded ones
    ],
)
def test_stores_beyond_loads_counts_the_lines_only_stores_allocate(backend, store_field, store_shift, expected_lines):
    model = copy_model(store_field, store_shift)
    block = (32, 1, 1)
    counter = FootprintCounter(compile_kernel(model, block), {f.name: f for f in model.fields}, backend)
    wave = ThreadSet.linear_range(block, (128, 1, 1), 8, 4)  # blocks 8-11: 128 threads
    assert counter.union(AccessKind.STORE, [wave], 32) == 32
    assert counter.stores_beyond_loads(wave, 32) == expected_lines


@pytest.mark.slow
def test_deep_blocks_folded_in_z_lose_the_previous_waves_halo_to_their_stores():
    """V100, 3D star of range 2 on the measured domain: 16x4x16 unfolded measured 10.15 B/Lup of DRAM load and
    folded 2x in z 10.73 (validation/data/v100). The folded block's waves load twice as much; their loads alone
    just fit the 6 MB with the previous wave's (ratio 1.04), and the loads-only coverage predicted the halo
    to hit (9.49 B/Lup, less than unfolded). With the stores that also take L2, the folded one loads more."""
    model = pp.harvest(star_3d(2, (596, 596, 508)), align="interior")
    ranking = pp.rank(model, "V100", blocks=[(16, 4, 16)], folds=[(1, 1, 1), (1, 1, 2)], compile_resources=False)
    by_fold = {c.launch.fold: c.metrics for c in ranking.candidates}
    unfolded, folded = by_fold[(1, 1, 1)], by_fold[(1, 1, 2)]
    assert unfolded.previous_wave_ratio < 1.0 < folded.previous_wave_ratio
    assert folded.dram_load_bytes_per_lup > unfolded.dram_load_bytes_per_lup
    assert 10.15 * 0.95 < unfolded.dram_load_bytes_per_lup < 10.15 * 1.05
    assert 10.73 * 0.95 < folded.dram_load_bytes_per_lup < 10.73 * 1.05


def column_stencil(nx: int, ny: int) -> KernelModel:
    """``B[y][x] = A[y-1][x] + A[y][x] + A[y+1][x]`` in doubles: what a row of blocks shares with the row above
    is one halo row."""
    gx, gy = BID[0] * BDIM[0] + TID[0], BID[1] * BDIM[1] + TID[1]
    fields = (Field("A", 8, (ny + 2, nx), (nx, 1)), Field("B", 8, (ny + 2, nx), (nx, 1)))
    loads = tuple(Access("A", AccessKind.LOAD, (gy + 1 + dy) * nx + gx) for dy in (-1, 0, 1))
    return KernelModel(
        "column",
        fields,
        (*loads, Access("B", AccessKind.STORE, (gy + 1) * nx + gx)),
        (nx, ny, 1),
        nx * ny,
        flops_per_lup=2.0,
    )


@pytest.mark.parametrize(
    "device, dram_load_bytes_per_lup",
    [
        # 432 blocks a wave, 1024 a row of blocks: the row above was loaded 2-3 waves earlier, 2.2 MB of loads and
        # 1.8 MB of stores each, which the A100's 40 MB hold: only the 8 rows' own doubles come from DRAM
        ("A100", 8.0),
        # 320 blocks a wave: 4 waves back, 6.5 MB of loads and 5.2 MB of stores, more than the V100's 6 MB: the
        # halo rows (2 per 8) come again
        ("V100", 10.0),
    ],
)
def test_a_wave_finds_the_halo_of_waves_before_its_previous_one_while_they_fit_in_l2(device, dram_load_bytes_per_lup):
    model = column_stencil(65536, 64)
    metrics = pp.rank(model, device, blocks=[(64, 8, 1)], folds=[(1, 1, 1)], compile_resources=False).best.metrics
    assert metrics.wave_overlap_bytes_per_lup == 0  # the previous wave is the same row's: it shares nothing
    assert metrics.dram_load_bytes_per_lup == pytest.approx(dram_load_bytes_per_lup, rel=1e-3)


def test_on_a_unified_l2_only_rereads_see_the_waves_oversubscription_and_on_a_split_one_the_halos_too():
    from pystencils_perf.estimate.volumes import reread_load

    # four blocks each load 100 B from L2 of which 80 B are their own compulsory volume; the wave's union is 250 B
    assert reread_load(1.0, 0.8, 400, 250.0, l2_partition_count=1) == pytest.approx(80.0)
    assert reread_load(1.0, 0.8, 400, 250.0, l2_partition_count=2) == pytest.approx(150.0)


def test_narrow_blocks_of_d3q19_streaming_on_an_h100_load_what_they_ask_of_l2_from_dram():
    """A lent H100 (validation/hopper/data/h100/stream19_ncu.csv): 8-wide blocks of D3Q19's streaming, whose waves
    exceed L2, load more from DRAM than from L2 (296 against 208 B per update), where halos that hit L2 predicted
    the wave's footprint (153). With the L2's two partitions the halos miss; on one unified L2 they would hit."""
    import dataclasses
    import pathlib

    from pystencils_perf.devices import get_device
    from pystencils_perf.measure.dataset import read_dataset
    from pystencils_perf.spec import load_spec

    root = pathlib.Path(__file__).resolve().parents[1]
    rows = read_dataset(root / "validation/hopper/data/h100/stream19_ncu.csv").rows
    measured = {r.launch.block: r.values for r in rows if r.launch.fold == (1, 1, 1)}
    narrow, wide = (8, 32, 2), (256, 2, 1)
    model = pp.harvest(load_spec(root / "validation/hopper/stream19.py").kernel)
    h100 = get_device("H100")
    assert h100.l2_partition_count == 2
    unified = dataclasses.replace(h100, l2_partition_count=1)

    def dram_load(device):
        ranking = pp.rank(model, device, blocks=[narrow, wide], folds=[(1, 1, 1)], compile_resources=False)
        return {c.launch.block: c.metrics.dram_load_bytes_per_lup for c in ranking.candidates}

    split, one = dram_load(h100), dram_load(unified)
    assert measured[narrow]["dram_load"] > measured[narrow]["l2_load"]  # the counters' own claim
    assert one[narrow] < 0.55 * measured[narrow]["dram_load"]  # 153 of 296 B: the wave's footprint alone
    assert split[narrow] > 0.65 * measured[narrow]["dram_load"]  # 206: the rest are ECC fills (README)
    for device in (split, one):  # a wide block's rows are its own: the same either way
        assert device[wide] == pytest.approx(measured[wide]["dram_load"], rel=0.1)


def test_an_older_waves_bytes_hit_by_the_step_or_by_the_devices_curve():
    """The column stencil on the A100 finds the row above 2-3 waves back (2 B per update), at 0.31 and 0.46 of the
    room the current wave leaves: the step counts all of it. A curve counts its share at those ratios: a
    constant 1 - 1/e of it. On the V100 the waves back to that row do not fit: nothing to count either way."""
    import dataclasses
    import math

    from pystencils_perf.devices import Curve, get_device

    model = column_stencil(65536, 64)
    a_third_missing = Curve(1.0, 1.0, 0.0, complement=True)  # hit(x) = 1 - 1/e whatever x: 37 % miss

    def dram_load(device, curve=None):
        dev = get_device(device)
        if curve is not None:
            dev = dataclasses.replace(dev, curves={**dev.curves, "older_wave_hit": curve})
        ranking = pp.rank(model, dev, blocks=[(64, 8, 1)], folds=[(1, 1, 1)], compile_resources=False)
        return ranking.best.metrics.dram_load_bytes_per_lup

    assert dram_load("A100") == pytest.approx(8.0, rel=1e-3)
    assert dram_load("A100", a_third_missing) == pytest.approx(8.0 + 2.0 * math.exp(-1.0), rel=1e-3)
    assert dram_load("V100") == dram_load("V100", a_third_missing) == pytest.approx(10.0, rel=1e-3)


def test_the_gh100_devices_share_the_older_wave_curve_fitted_on_the_h200():
    from pystencils_perf.devices import get_device

    fitted = get_device("H200").curves["older_wave_hit"]
    assert "star3d_r4_ncu.csv" in fitted.fitted_on and fitted.complement
    assert 0.4 < float(fitted(1.0)) < 0.6 and float(fitted(0.67)) > 0.95 and float(fitted(1.5)) < 0.05
    for name in ("H100", "H100-PCIe-80GB", "GH200-96GB"):
        curve = get_device(name).curves["older_wave_hit"]
        assert curve.borrowed_from == "H200-SXM-141GB" and (curve.b, curve.c) == (fitted.b, fitted.c)
    assert "older_wave_hit" not in get_device("A100").curves  # no measurement: the step


def test_a_previous_wave_that_takes_no_room_leaves_its_overlap_in_a_unified_l2():
    """The hit curve counts as a share of its value at no competition on a unified L2 (the authors' V100 curve, which
    every device borrows, leaves 6 % misses there), as fitted on a split one; misses grow with the previous wave's
    share of the room and never exceed the overlap."""
    import numpy as np

    from pystencils_perf.devices import get_device
    from pystencils_perf.estimate import composition

    curves = get_device("V100").curves
    floor = 1.0 - float(curves["previous_wave_xy_hit"](0.0))
    assert 0.05 < floor < 0.07

    def dram_load(ratio, unified_l2):
        zeros = np.zeros_like(ratio)
        return composition.dram_load(1.0, 2.0, ratio, zeros, zeros, unified_l2).evaluate(curves)

    assert dram_load(np.array(0.0), True) == 1.0
    assert dram_load(np.array(0.0), False) == pytest.approx(1.0 + 2.0 * floor)
    ratios = np.linspace(0.0, 10.0, 101)
    for unified_l2 in (True, False):
        volumes = dram_load(ratios, unified_l2)
        assert np.all(np.diff(volumes) >= 0) and volumes.max() <= 3.0
    assert np.all(dram_load(ratios, True) <= dram_load(ratios, False))


def test_a_jacobi_wave_on_a_large_unified_l2_loads_what_it_must():
    """A 2D Jacobi sweep on an L40 (96 MB of L2): each wave shares two rows with the previous one, which fills a few
    per cent of the room. On the unified L2 they hit; the same GPU with a split L2 keeps the curve's misses."""
    import dataclasses

    from pystencils_perf.catalog import jacobi_2d
    from pystencils_perf.devices import get_device

    model = pp.harvest(jacobi_2d((1024, 8192)))
    l40 = get_device("L40")

    def metrics(device):
        ranking = pp.rank(model, device, blocks=[(256, 1, 1)], folds=[(1, 1, 1)], compile_resources=False)
        return ranking.best.metrics

    unified, split = metrics(l40), metrics(dataclasses.replace(l40, l2_partition_count=2))
    assert unified.previous_wave_ratio < 0.1 and unified.wave_overlap_bytes_per_lup > 0.05
    assert unified.dram_load_bytes_per_lup == pytest.approx(unified.dram_compulsory_load_bytes_per_lup, rel=1e-4)
    assert split.dram_load_bytes_per_lup > unified.dram_load_bytes_per_lup + 0.05 * split.wave_overlap_bytes_per_lup
