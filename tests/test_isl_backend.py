"""The ISL footprint backend at real sizes: its formulation pieces, and equality with enumeration."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

import pystencils_perf as pp
from pystencils_perf.catalog import box_3d_assignments
from pystencils_perf.estimate import footprint_enum, footprint_isl
from pystencils_perf.estimate.footprint_enum import ThreadSet


@pytest.mark.parametrize("grid", [(3, 4, 5), (16, 96, 32), (1, 7, 3), (5, 1, 1)])
def test_a_wave_is_at_most_five_disjoint_boxes_of_exactly_its_blocks(grid):
    gx, gy, gz = grid
    total = gx * gy * gz
    rng = np.random.default_rng(7)
    ranges = [(0, total), (total - 1, 1)]
    ranges += [(int(a), int(b - a) + 1) for a, b in (sorted(rng.integers(0, total, 2)) for _ in range(30))]
    for first, count in ranges:
        boxes = footprint_isl.block_boxes(ThreadSet.linear_range((1, 1, 1), grid, first, count))
        assert len(boxes) <= 5
        covered = [
            x + gx * y + gx * gy * z
            for box in boxes
            for z in range(box[2][0], box[2][1] + 1)
            for y in range(box[1][0], box[1][1] + 1)
            for x in range(box[0][0], box[0][1] + 1)
        ]
        assert sorted(covered) == list(range(first, first + count))  # disjoint and exact


def test_offset_boxes_cover_a_stencil_exactly():
    basis = (198404, 514, 1)  # the strides of a 514 x 386 x 258 array
    box = [dz * basis[0] + dy * basis[1] + dx for dz, dy, dx in itertools.product((-1, 0, 1), repeat=3)]
    assert len(footprint_isl.offset_boxes(box, basis)) == 1  # 27 neighbours are one box
    star = [0] + [s * r * stride for r in range(1, 5) for s in (-1, 1) for stride in basis]
    boxes = footprint_isl.offset_boxes(star, basis)
    assert len(boxes) <= 5  # a line per axis, the centre in one of them
    offsets = [
        sum(k * s for k, s in zip(point, basis))
        for lo, hi in boxes
        for point in itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi)))
    ]
    assert sorted(offsets) == sorted(star)


@pytest.fixture(scope="module")
def box_model_real_size():
    return pp.harvest(box_3d_assignments((512, 384, 256)))


@pytest.mark.parametrize("block, fold", [((32, 4, 8), (1, 1, 1)), ((16, 8, 8), (1, 1, 1)), ((32, 4, 8), (1, 2, 1))])
def test_box_stencil_at_real_size_isl_equals_enumeration_within_seconds(box_model_real_size, block, fold):
    """Issue 16: one candidate of the 512x384x256 float box stencil on H100 took about 5 minutes with isl."""
    by_enum = pp.rank(box_model_real_size, "H100", blocks=[block], folds=[fold], backend="enum")
    start = time.perf_counter()
    by_isl = pp.rank(box_model_real_size, "H100", blocks=[block], folds=[fold], backend="isl")
    seconds = time.perf_counter() - start
    assert by_isl.candidates[0].metrics == by_enum.candidates[0].metrics
    assert seconds < 5.0


@pytest.mark.parametrize("granule", [32, 128])
def test_box_stencil_waves_and_their_overlap_equal_enumeration(box_model_real_size, granule):
    from pystencils_perf.estimate.addresses import compile_kernel
    from pystencils_perf.kernel import AccessKind

    block = (16, 8, 8)
    model = box_model_real_size.folded((1, 1, 2))
    compiled = compile_kernel(model, block)
    loads = compiled.for_field("src", AccessKind.LOAD)
    field = model.field_by_name("src")
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    first = grid[0] * grid[1] * (grid[2] // 2) - 100  # the wave spans a plane of blocks
    wave, previous = (ThreadSet.linear_range(block, grid, f, 264) for f in (first, first - 264))
    counts = {}
    for backend in (footprint_enum, footprint_isl):
        a, b = (backend.touched(loads, field, ts, granule) for ts in (wave, previous))
        counts[backend.__name__] = (backend.count_union([a]), backend.count_union([a, b]), backend.count_overlap(a, b))
    assert counts["pystencils_perf.estimate.footprint_isl"] == counts["pystencils_perf.estimate.footprint_enum"]
