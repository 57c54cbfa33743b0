"""Property tests: enumeration, ISL and a brute-force per-thread count agree exactly.

Random kernels on small grids: a 3D field with random padding (strides),
element size 4 or 8 and base alignment; loads whose addresses scale the global
index along x (strided accesses) and add constant offsets; a guard that clips
the last blocks; random block shapes, foldings, granules, single blocks and
waves of consecutive blocks.
"""

from __future__ import annotations

from dataclasses import replace
from unittest import mock

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pystencils_perf.estimate import footprint_enum, footprint_isl
from pystencils_perf.estimate.addresses import compile_kernel, satisfies, thread_coords
from pystencils_perf.estimate.footprint_enum import ThreadSet, count_points
from pystencils_perf.kernel import BDIM, BID, TID, Access, AccessKind, Field, KernelModel

POW2 = st.sampled_from([1, 2, 4, 8])


@st.composite
def kernels(draw):
    """A random stencil-like kernel model, already folded, with a block and a granule."""
    domain = tuple(draw(st.integers(1, 12)) for _ in range(3))
    ghost = 2
    pad_x = draw(st.integers(0, 5))  # padding makes the y and z strides irregular
    x_scale = draw(st.sampled_from([1, 1, 2, 3, -1]))
    extent_x = abs(x_scale) * (domain[0] + 2 * ghost) + pad_x
    shape = (domain[2] + 2 * ghost, domain[1] + 2 * ghost, extent_x)
    strides = (shape[1] * shape[2], shape[2], 1)
    element_bytes = draw(st.sampled_from([4, 8]))
    base = element_bytes * draw(st.integers(0, 256 // element_bytes - 1))
    field = Field("A", element_bytes, shape, strides, base)

    ctr = [BID[a] * BDIM[a] + TID[a] for a in range(3)]
    x_origin = ghost * abs(x_scale) if x_scale > 0 else abs(x_scale) * (domain[0] + ghost) - 1
    offsets = draw(
        st.lists(st.tuples(*(st.integers(-ghost, ghost) for _ in range(3))), min_size=1, max_size=6, unique=True)
    )
    accesses = []
    for dx, dy, dz in offsets:
        x = x_origin + x_scale * ctr[0] + dx
        address = (ctr[2] + ghost + dz) * strides[0] + (ctr[1] + ghost + dy) * strides[1] + x
        accesses.append(Access("A", AccessKind.LOAD, address))
    domain_guard = sp.And(*(c < n for c, n in zip(ctr, domain)))
    model = KernelModel("random", (field,), tuple(accesses), domain, int(np.prod(domain)), domain_guard)
    fold = (draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2, 3])), draw(st.sampled_from([1, 2])))
    model = model.folded(fold)
    block = (draw(POW2), draw(POW2), draw(st.sampled_from([1, 2, 4])))
    granule = draw(st.sampled_from([4, 8, 32, 64, 128]))
    return model, block, granule


def brute_force(compiled, field, block, bids, granule):
    """Distinct granules over every active thread, one address at a time."""
    touched = set()
    for bid in bids:
        coords = thread_coords(block, bid)
        for instr in compiled.instructions:
            addr = field.base_offset_bytes + field.element_bytes * instr.address.evaluate(coords)[instr.active(coords)]
            for first, last in zip(addr // granule, (addr + field.element_bytes - 1) // granule):
                touched.update(range(first, last + 1))
    return len(touched)


def count(backend, instructions, field, thread_sets, granule):
    return backend.count_union([backend.touched(instructions, field, ts, granule) for ts in thread_sets])


# derandomized: the same examples in every run, no example database written into the tree
@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels(), st.data())
def test_enum_isl_and_brute_force_agree(case, data):
    model, block, granule = case
    compiled = compile_kernel(model, block)
    field = model.fields[0]
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    total = int(np.prod(grid))
    first = data.draw(st.integers(0, total - 1), label="first block")
    n_blocks = data.draw(st.integers(1, total - first), label="blocks")
    bids = [(i % grid[0], (i // grid[0]) % grid[1], i // (grid[0] * grid[1])) for i in range(first, first + n_blocks)]
    loads = compiled.for_field("A", AccessKind.LOAD)
    only_loads = replace(compiled, instructions=tuple(loads))

    wave = ThreadSet.linear_range(block, grid, first, n_blocks)
    expected = brute_force(only_loads, field, block, bids, granule)
    translated = footprint_enum._translated_pieces(loads, field, [wave], granule)
    if translated is not None:  # pieces counted as translates of each other: the same intervals as row by row
        assert np.array_equal(translated[0], footprint_enum._touched_rows(loads, field, wave, granule))
    # several sets at once (a candidate's waves share their pieces): each the same as on its own
    other_first = data.draw(st.integers(0, total - 1), label="another set's first block")
    other = ThreadSet.linear_range(block, grid, other_first, data.draw(st.integers(1, total - other_first)))
    together = footprint_enum.touched_sets(loads, field, [wave, other, wave], granule)
    for threads, footprint in zip([wave, other, wave], together):
        assert np.array_equal(footprint, footprint_enum._touched_rows(loads, field, threads, granule))
    assert count(footprint_enum, loads, field, [wave], granule) == expected
    assert count(footprint_isl, loads, field, [wave], granule) == expected

    one = ThreadSet.single_block(block, bids[0])
    expected_one = brute_force(only_loads, field, block, bids[:1], granule)
    assert count(footprint_enum, loads, field, [one], granule) == expected_one
    assert count(footprint_isl, loads, field, [one], granule) == expected_one

    # a union of two thread sets (a wave and one of its blocks) counts each granule once
    assert count(footprint_enum, loads, field, [wave, one], granule) == expected
    assert count(footprint_isl, loads, field, [wave, one], granule) == expected

    active = sum(int(satisfies(conj, thread_coords(block, b)).sum()) for b in bids for conj in compiled.points)
    assert count_points(compiled.points, wave) == active


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 20)), max_size=12), min_size=1, max_size=3),
    st.sampled_from([0, 10**9]),
)
def test_union_of_intervals_is_the_covered_granules_maximal_runs(parts, counted_span):
    """`touched` keeps a union as disjoint intervals, by sorting the firsts and the lasts apart or by counting
    coverage over the span (`counted_span` forces either): the intervals must be the covered granules' maximal
    runs, and `count_union` of several must count each granule once."""
    covered = {g for part in parts for first, length in part for g in range(first, first + length + 1)}
    with mock.patch.object(footprint_enum, "COUNTED_SPAN_PER_INTERVAL", counted_span):
        columns = [
            footprint_enum._union(
                [np.array([f for f, _ in part], dtype=np.int64)], [np.array([f + n for f, n in part], dtype=np.int64)]
            )
            for part in parts
            if part
        ]
        union_count = footprint_enum.count_union(columns) if columns else 0
    for union, part in zip(columns, [p for p in parts if p]):
        assert (union[:, 0] <= union[:, 1]).all() and (union[1:, 0] > union[:-1, 1] + 1).all()
        assert {g for a, b in union for g in range(a, b + 1)} == {g for f, n in part for g in range(f, f + n + 1)}
    assert union_count == len(covered)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from([(1, 64, 0, 0, 0, 0), (1, 0, 64, 0, 8, 0), (2, 1, 0, 0, 0, 0)]),
            st.integers(-70, 70),
            st.sampled_from(["a", "b"]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([(32, 2, 1), (8, 4, 2), (64, 1, 1)]),
)
def test_byte_addresses_and_active_masks_are_each_instructions_own(instrs, block):
    """Sharing one product per distinct coefficient vector and one mask per guard, within a call and across calls
    on the same blocks (`block_threads`), gives each instruction its own address and mask, whatever the mix of
    coefficient vectors, offsets, fields and guards."""
    from pystencils_perf.estimate.addresses import Affine, BlockThreads, Instruction, active_masks, byte_addresses

    fields = {"a": Field("a", 8, (10**6,), (1,)), "b": Field("b", 4, (10**6,), (1,), base_offset_bytes=128)}
    guards = (((Affine((-1, 0, 0, 0, 0, 0), 40),),), ((),))
    instructions = [Instruction(f, AccessKind.LOAD, Affine(c, o), guards[o % 2]) for c, o, f in instrs]
    threads = BlockThreads(block, ((0, 0, 0), (3, 1, 0)))
    coords = np.stack([thread_coords(block, bid) for bid in ((0, 0, 0), (3, 1, 0))])
    for order in (instructions, instructions[::-1]):  # the second call finds everything computed
        addresses, masks = byte_addresses(order, fields, threads), active_masks(order, threads)
        for i, instr in enumerate(order):
            field = fields[instr.field]
            expected = field.base_offset_bytes + field.element_bytes * instr.address.evaluate(coords)
            assert (addresses[i] == expected).all()
            assert (masks[i] == instr.active(coords)).all()


@pytest.mark.parametrize("domain", [(40, 30, 6), (42, 30, 6)])
def test_a_wave_is_counted_from_translates_of_a_few_pieces(domain):
    """A wave of many rows of blocks on a grid whose last row (and, for 42 points, last column) the guard clips:
    the middles of its runs are translates of pieces of a few lengths, the clipped ends of one another in y, the
    clipped last row is counted row by row, and the union is exact."""
    from pystencils_perf.catalog import star_3d
    import pystencils_perf as pp

    model = pp.harvest(star_3d(1, domain))
    block = (8, 4, 1)
    compiled = compile_kernel(model, block)
    field = next(f for f in model.fields if f.name == "src")
    loads = compiled.for_field(field.name, AccessKind.LOAD)
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    wave = ThreadSet.linear_range(block, grid, 3, 40)  # rows of 5 or 6 blocks, the last of 8 rows clipped in y
    for granule in (32, 128):
        footprint_enum._PIECE_FOOTPRINTS.clear()
        translated = footprint_enum._translated_pieces(loads, field, [wave], granule)
        assert translated is not None
        assert np.array_equal(translated[0], footprint_enum._touched_rows(loads, field, wave, granule))
        assert 0 < len(footprint_enum._PIECE_FOOTPRINTS.entries) < len(wave.runs)  # fewer pieces counted than runs


def test_a_long_middle_is_the_union_of_its_halves():
    """Rows of 125 blocks: a middle of 64 blocks is counted as two of 32, each as two of 16, ... (one block walked
    row by row), and the wave's union is the same as walking every row of every block."""
    from pystencils_perf.catalog import star_3d
    import pystencils_perf as pp

    model = pp.harvest(star_3d(1, (1000, 8, 2)))
    block = (8, 4, 1)
    field = next(f for f in model.fields if f.name == "src")
    loads = compile_kernel(model, block).for_field(field.name, AccessKind.LOAD)
    wave = ThreadSet.linear_range(block, (125, 2, 2), 0, 500)
    for granule in (32, 128):
        footprint_enum._PIECE_FOOTPRINTS.clear()
        with mock.patch.object(footprint_enum, "_piece_footprint", wraps=footprint_enum._piece_footprint) as walked:
            translated = footprint_enum._translated_pieces(loads, field, [wave], granule)
        assert np.array_equal(translated[0], footprint_enum._touched_rows(loads, field, wave, granule))
        middles = [key[3] for _, key in footprint_enum._PIECE_FOOTPRINTS.entries if key[2] == 0]
        assert 64 in middles and 32 in middles
        assert all(call.args[3][1] == call.args[3][0] for call in walked.call_args_list)  # one block each
