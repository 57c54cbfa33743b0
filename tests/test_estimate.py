"""The paper's worked examples and exact checks of the footprint routine."""

import numpy as np
import pytest

import pystencils_perf as pp
from pystencils_perf.estimate.addresses import compile_kernel, satisfies, thread_coords
from pystencils_perf.estimate import footprint_enum, footprint_isl
from pystencils_perf.estimate.footprint_enum import ThreadSet, count_points
from pystencils_perf.estimate.l1 import block_requests
from pystencils_perf.kernel import BDIM, BID, TID, Access, AccessKind, Field, KernelModel

V100 = pp.get_device("V100")


def footprint(instructions, field, thread_sets, granule_bytes, backend=footprint_enum):
    parts = [backend.touched(instructions, field, ts, granule_bytes) for ts in thread_sets]
    return backend.count_union(parts)


def one_load_model(stride, element_bytes=8, n=4096):
    """A kernel whose only access is ``A[stride * global x]`` (the paper's fig. 1)."""
    gx = BID[0] * BDIM[0] + TID[0]
    field = Field("A", element_bytes, (n * max(stride, 1),), (1,))
    return KernelModel("fig1", (field,), (Access("A", AccessKind.LOAD, stride * gx),), (n, 1, 1), n)


@pytest.mark.parametrize("stride, cycles_per_group", [(1, 1), (2, 2), (32, 16)])
def test_bank_conflicts_of_doubles(stride, cycles_per_group):
    # A[tid.x]: 1 cycle per half-warp, B[2*tid.x]: 2, D[32*tid.x]: all 16 threads in one bank
    model = one_load_model(stride)
    compiled = compile_kernel(model, (32, 1, 1))
    req = block_requests(compiled, {f.name: f for f in model.fields}, (32, 1, 1), [(3, 0, 0)], V100)
    assert req.l1_cycles == 2 * cycles_per_group  # a warp of 32 is two half-warps
    assert req.lattice_updates == 32


def test_floats_are_grouped_per_warp():
    model = one_load_model(1, element_bytes=4)
    compiled = compile_kernel(model, (32, 1, 1))
    req = block_requests(compiled, {f.name: f for f in model.fields}, (32, 1, 1), [(0, 0, 0)], V100)
    assert req.l1_cycles == 1  # 32 floats = 128 B = one wavefront


def footprint_2x2(offsets):
    width = 100
    x, y = TID[0], TID[1]
    accesses = tuple(Access("src", AccessKind.LOAD, (y + dy) * width + (x + dx)) for dx, dy in offsets)
    field = Field("src", 8, (width, width), (width, 1))
    model = KernelModel("2d4pt", (field,), accesses, (2, 2, 1), 4)
    compiled = compile_kernel(model, (2, 2, 1))
    threads = [ThreadSet.single_block((2, 2, 1), (0, 0, 0))]
    unique = footprint(list(compiled.instructions), field, threads, granule_bytes=8)
    total = sum(footprint([i], field, threads, 8) for i in compiled.instructions)
    return unique, total


def test_2d_four_point_stencil_on_2x2_block_touches_10_of_16():
    # fig. 3 of the paper: four accesses (the centre and three neighbours), four threads:
    # 16 addresses, 10 unique
    assert footprint_2x2([(0, 0), (1, 0), (-1, 0), (0, 1)]) == (10, 16)
    # the four von Neumann neighbours without the centre overlap less: 12 unique
    assert footprint_2x2([(1, 0), (-1, 0), (0, 1), (0, -1)]) == (12, 16)


def brute_force_footprint(compiled, field, block, bids, granule):
    touched = set()
    for bid in bids:
        coords = thread_coords(block, bid)
        for instr in compiled.instructions:
            mask = instr.active(coords)
            addr = field.base_offset_bytes + field.element_bytes * instr.address.evaluate(coords)[mask]
            first = addr // granule
            last = (addr + field.element_bytes - 1) // granule
            touched.update(first.tolist())
            touched.update(last.tolist())
    return len(touched)


@pytest.mark.slow
@pytest.mark.parametrize("fold", [(1, 1, 1), (1, 2, 1), (1, 1, 2)])
@pytest.mark.parametrize("block", [(8, 4, 2), (1, 8, 4), (16, 1, 1)])
def test_wave_footprint_matches_brute_force(block, fold):
    from pystencils_perf.catalog import star_3d

    model = pp.harvest(star_3d(2, (21, 10, 9)), align="interior").folded(fold)
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    compiled = compile_kernel(model, block)
    field = model.field_by_name("src")
    loads = compiled.for_field("src", AccessKind.LOAD)
    total = int(np.prod(grid))
    first, count = total // 3, max(total // 3, 1)
    threads = ThreadSet.linear_range(block, grid, first, count)
    ids = range(first, first + count)
    bids = [(i % grid[0], (i // grid[0]) % grid[1], i // (grid[0] * grid[1])) for i in ids]
    from dataclasses import replace

    only_loads = replace(compiled, instructions=tuple(loads))
    previous = ThreadSet.linear_range(block, grid, first - count, count) if first >= count else None
    for granule in (8, 32, 128):
        expected = brute_force_footprint(only_loads, field, block, bids, granule)
        assert footprint(loads, field, [threads], granule) == expected
        assert footprint(loads, field, [threads], granule, footprint_isl) == expected
        if previous is not None:  # the overlap with the previous wave, |A| + |B| - |A u B| and by intersection
            prev_bids = [
                (i % grid[0], (i // grid[0]) % grid[1], i // (grid[0] * grid[1])) for i in range(first - count, first)
            ]
            both = footprint(loads, field, [threads, previous], granule)
            expected_overlap = expected + brute_force_footprint(only_loads, field, block, prev_bids, granule) - both
            assert both == brute_force_footprint(only_loads, field, block, bids + prev_bids, granule)
            for backend in (footprint_enum, footprint_isl):
                parts = [backend.touched(loads, field, ts, granule) for ts in (threads, previous)]
                assert backend.count_overlap(*parts) == expected_overlap
    # active points: the guard clips the domain's edge blocks
    expected = sum(int(satisfies(conj, thread_coords(block, b)).sum()) for b in bids for conj in compiled.points)
    assert count_points(compiled.points, threads) == expected


@pytest.mark.slow
def test_star_ranking_matches_the_paper(star_r4_kernel):
    ranking = pp.rank(star_r4_kernel, "V100")
    assert len(ranking.candidates) >= 120
    n = len(ranking.candidates)
    by_dram = sorted(
        ranking.candidates,
        key=lambda c: c.metrics.dram_load_bytes_per_lup + c.metrics.dram_store_bytes_per_lup,
    )
    # thin in z and wide in x: among the worst by DRAM volume
    assert [c.launch for c in by_dram].index(pp.LaunchConfig((128, 8, 1))) >= 0.75 * n
    # DRAM limits the best candidates, as the paper reports
    assert all(c.prediction.limiter == "DRAM" for c in ranking.candidates[:5])
    # every term of the default model is reported: the paper's limiters (L1 split into its two stages) and more
    assert {"FP", "L1 banks", "L1 tags", "L2", "DRAM", "issue", "latency"} <= set(
        ranking.best.prediction.seconds_per_lup
    )
    js = ranking.as_json()
    assert js["device"] == "V100-PCIe-32GB"
    cand = js["candidates"][0]
    assert set(cand) >= {"block", "fold", "glups", "limiter", "bytes_per_lup", "l1_cycles_per_lup"}
    assert set(cand["bytes_per_lup"]) == {"l2_load", "l2_store", "dram_load", "dram_store"}
    assert js["candidates"][0]["glups"] >= js["candidates"][-1]["glups"]


def test_occupancy_from_threads_registers_and_shared_memory():
    from dataclasses import replace

    from pystencils_perf.estimate.volumes import occupancy

    model = one_load_model(1)
    assert occupancy(model, 1024, V100).blocks_per_sm == 2  # 2048 threads per SM
    assert occupancy(model, 64, V100).blocks_per_sm == 32  # 32 blocks per SM at most
    heavy = replace(model, registers_per_thread=64)  # 64 x 32 = 2048 registers per warp
    occ = occupancy(heavy, 1024, V100)
    assert (occ.blocks_per_sm, occ.limited_by) == (1, "registers")
    shared = replace(model, shared_memory_bytes=40 * 1024)
    assert occupancy(shared, 256, V100).blocks_per_sm == 2  # 96 KiB per SM


def test_blocks_larger_than_the_iteration_space_are_rejected(jacobi_kernel):
    ranking = pp.rank(jacobi_kernel, "V100", blocks=[(128, 1, 1), (32, 4, 1)], folds=[(1, 1, 1), (1, 2, 1)])
    assert {c.launch for c in ranking.candidates} == {
        pp.LaunchConfig((32, 4, 1)),
        pp.LaunchConfig((32, 4, 1), (1, 2, 1)),
    }
    assert all("exceeds the 64 threads" in reason for _, reason in ranking.rejected)


@pytest.mark.parametrize(
    "spec_path, params",
    [
        ("validation/a100_convolution/convolution.py", {"tile_size_x": 3, "tile_size_y": 4, "read_only": 0}),
        (
            "validation/rtx2080ti_convolution/convolution_shmem.py",
            {"TILE_SIZE_X": 4, "TILE_SIZE_Y": 2, "READ_ONLY": 0, "PADDING": 0},
        ),
    ],
)
def test_compiled_offset_groups_and_per_field_instructions_are_those_of_the_instructions(spec_path, params):
    """`compile_kernel` groups its instructions from its integer tables (guarded tiles, a shared copy's guard per
    iteration): the groups, offsets and per-field tuples equal those a plain pass over the instructions makes."""
    from pathlib import Path

    from pystencils_perf.estimate.addresses import offset_groups
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    spec = load_tunable_spec(Path(__file__).resolve().parents[1] / spec_path)
    model = pp.harvest(spec.kernel(params))
    for view in (model, model.shared_view()) if model.shared_accesses else (model,):
        for block in [(32, 4, 1), (48, 2, 1), (128, 1, 1)]:
            compiled = compile_kernel(view, block)
            for f in view.fields:
                for kind in AccessKind:
                    assert compiled.for_field(f.name, kind) == tuple(
                        i for i in compiled.instructions if i.field == f.name and i.kind is kind
                    )
            for instrs in (compiled.instructions, *(compiled.for_field(f.name, AccessKind.LOAD) for f in view.fields)):
                plain: dict = {}
                for i in instrs:
                    plain.setdefault((i.field, i.kind, i.address.coeffs, i.guards), []).append(i.address.offset)
                grouped = offset_groups(instrs)
                assert [key for key, _ in grouped] == list(plain)
                assert all(offsets.tolist() == plain[key] for key, offsets in grouped)
