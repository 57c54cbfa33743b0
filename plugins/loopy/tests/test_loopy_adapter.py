"""The loopy adapter: the catalog's stencils written in loopy estimate exactly like the pystencils ones."""

import os
import re
from collections import Counter

from pystencils_perf.tempcache import use_temporary_pystencils_cache

# loopy (through pytools) and pystencils keep disk caches; never in the home directory during tests.
os.environ["XDG_CACHE_HOME"] = use_temporary_pystencils_cache("pystencils-perf-loopy-test-")
os.environ["LOOPY_NO_CACHE"] = "1"

import loopy as lp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sp  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import jacobi_2d, star_3d  # noqa: E402
from pystencils_perf.estimate.shared import shared_requests  # noqa: E402
from pystencils_perf.kernel import BDIM, BID, TID, AccessKind, Field  # noqa: E402
from pystencils_perf_loopy import kernel_block, stencils  # noqa: E402

DOMAIN_2D = (256, 128)
DOMAIN_3D = (128, 64, 32)


@pytest.fixture(scope="module")
def pystencils_2d():
    return jacobi_2d(DOMAIN_2D)


@pytest.fixture(scope="module")
def pystencils_3d():
    return star_3d(1, DOMAIN_3D)


def metrics(kernel, block, fold=(1, 1, 1), align="base"):
    """The estimator's metrics with occupancy from the thread count alone, as for a loopy kernel (no nvcc)."""
    return pp.rank(kernel, "V100", blocks=[block], folds=[fold], align=align, compile_resources=False).best.metrics


def assert_same_volumes(expected, got):
    """Every metric but the flop count and the instructions it issues (each generator's code has its own arithmetic)."""
    expected, got = expected.as_dict(), got.as_dict()
    arithmetic = ("flops_per_lup", "warp_instructions_per_lup")  # FMAs issue with the flops
    differ = {k: (expected[k], got[k]) for k in expected if k not in arithmetic and expected[k] != got.get(k)}
    assert not differ


@pytest.mark.parametrize("block", [(16, 8, 1), (64, 2, 1), (8, 8, 1)])
def test_jacobi_2d_gives_the_pystencils_volumes(pystencils_2d, block):
    knl = stencils.jacobi_2d(DOMAIN_2D, block)
    assert kernel_block(knl) == block
    assert_same_volumes(metrics(pystencils_2d, block), metrics(knl, block))


@pytest.mark.parametrize("block", [(8, 4, 2), (32, 2, 1), (16, 4, 4)])
def test_star_3d_7pt_gives_the_pystencils_volumes(pystencils_3d, block):
    assert_same_volumes(metrics(pystencils_3d, block), metrics(stencils.star_3d7(DOMAIN_3D, block), block))


def test_the_comparison_can_fail(pystencils_3d):
    """Different blocks give different volumes, so equal volumes above are no accident."""
    a, b = metrics(pystencils_3d, (8, 4, 2)), metrics(pystencils_3d, (32, 2, 1))
    assert a.l2_load_bytes_per_lup != pytest.approx(b.l2_load_bytes_per_lup, rel=0.05)
    assert a.l1_cycles_per_lup != b.l1_cycles_per_lup


def test_split_kernel_is_block_generic(pystencils_2d):
    """Split 16x8, modelled at 32x4: the same as the kernel split 32x4 (and as pystencils at 32x4)."""
    knl = stencils.jacobi_2d(DOMAIN_2D, (16, 8, 1))
    model = pp.harvest(knl)
    store = model.stores[0].address
    assert store == BDIM[0] * BID[0] + TID[0] + 258 * (BDIM[1] * BID[1] + TID[1]) + 259
    assert_same_volumes(metrics(pystencils_2d, (32, 4, 1)), metrics(knl, (32, 4, 1)))


def test_unrolled_inner_iname_is_folding(pystencils_2d):
    """Each thread updating 2 points in y through an ``unr`` iname is pystencils' folding (1, 2, 1)."""
    knl = stencils.jacobi_2d(DOMAIN_2D, (16, 8, 1), fold=(1, 2, 1))
    model = pp.harvest(knl)
    assert [(str(lp_.counter), lp_.start, lp_.stop) for lp_ in model.loops] == [("loop.j_fold", 0, 2)]
    assert model.work_items == (256, 64, 1)
    assert_same_volumes(metrics(pystencils_2d, (16, 8, 1), fold=(1, 2, 1)), metrics(knl, (16, 8, 1)))


def test_interior_alignment_matches_pystencils(pystencils_2d):
    knl = stencils.jacobi_2d(DOMAIN_2D, (16, 8, 1))
    assert {f.base_offset_bytes for f in pp.harvest(knl, align="interior").fields} == {(-(258 + 1) * 8) % 256}
    assert_same_volumes(
        metrics(pystencils_2d, (16, 8, 1), align="interior"), metrics(knl, (16, 8, 1), align="interior")
    )


def test_default_ranking_predicts_like_pystencils(pystencils_2d):
    """The same candidates, each predicted within 1 % of pystencils' (the loopy kernel is not compiled here, so
    its occupancy follows from the threads; candidates 0.01 % apart may swap places)."""
    knl = stencils.jacobi_2d(DOMAIN_2D, (16, 8, 1))
    ours = {c.launch: c.prediction.glups for c in pp.rank(knl, "V100").candidates}
    theirs = {c.launch: c.prediction.glups for c in pp.rank(pystencils_2d, "V100").candidates}
    assert ours.keys() == theirs.keys()
    assert all(ours[launch] == pytest.approx(theirs[launch], rel=0.01) for launch in ours)


def _kernel(domain, instructions, args, *, split="i", tags=None, fix=None):
    knl = lp.make_kernel(domain, instructions, args, target=lp.CudaTarget(), name="k", lang_version=(2018, 2))
    if fix:
        knl = lp.fix_parameters(knl, **fix)
    if tags:
        return lp.tag_inames(knl, tags)
    return lp.split_iname(knl, split, 16, outer_tag="g.0", inner_tag="l.0")


def _array(name, shape, dtype=np.float64, **kw):
    return lp.GlobalArg(name, dtype, shape=shape, **kw)


def test_matvec_reduction_loop_guard_and_flops():
    """``y = A x`` with one thread per row: the reduction iname is a loop, 1000 rows leave a guard."""
    knl = _kernel(
        "{[i, j]: 0 <= i < 1000 and 0 <= j < 64}",
        "y[i] = sum(j, A[i, j] * x[j])",
        [_array("A", (1000, 64)), _array("x", (64,)), _array("y", (1000,))],
    )
    model = pp.harvest(knl)
    j = model.loops[0].counter
    gx = BDIM[0] * BID[0] + TID[0]
    assert (model.loops[0].start, model.loops[0].stop) == (0, 64)
    assert {str(a) for a in model.accesses} == {f"load  A[{64 * gx + j}]", f"load  x[{j}]", f"store y[{gx}]"}
    assert model.domain == sp.Lt(gx, 1000)
    assert model.work_items == (1000, 1, 1)
    assert model.lattice_updates == 64000 and model.flops_per_lup == 2  # one multiply and one add per (i, j)


def test_strides_and_offsets_come_from_the_arguments():
    knl = _kernel(
        "{[i, j]: 0 <= i < 64 and 0 <= j < 32}",
        "out[i, j] = inp[i, j] {if=i < 30}",
        [_array("out", (64, 32), order="F"), _array("inp", (64, 32), offset=3)],
    )
    model = pp.harvest(knl)
    fields = {f.name: f for f in model.fields}
    assert fields["out"].strides == (1, 64) and fields["inp"].strides == (32, 1)
    assert fields["inp"].base_offset_bytes == 24 and fields["out"].base_offset_bytes == 0
    assert sp.Lt(BDIM[0] * BID[0] + TID[0], 30) in model.domain.args


A, B = _array("a", (80,)), _array("b", (80,))
ERRORS = {
    "non-split index": (
        dict(
            domain="{[g, l]: 0 <= g < 4 and 0 <= l < 16}",
            instructions="b[20*g + l] = a[20*g + l]",
            args=[A, B],
            tags={"g": "g.0", "l": "l.0"},
        ),
        "'g' (g.0) with coefficient 20 and 'l' (l.0, 16 threads) with coefficient 1",
    ),
    "non-affine index": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[(i*i) % 64]", args=[A, B]),
        "load of array 'a' in instruction 'insn', index",
    ),
    "indirect index": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[idx[i]]", args=[A, B, _array("idx", (64,), np.int32)]),
        "depends on ['idx'], which are not inames",
    ),
    "unfixed parameter": (
        dict(domain="{[i]: 0 <= i < n}", instructions="b[i] = a[i]", args=[A, B, lp.ValueArg("n", np.int32)]),
        "depends on parameters ['n']; fix them with lp.fix_parameters",
    ),
    "no GPU tags": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[i]", args=[A, B], tags={"i": "for"}),
        "no iname is tagged g.N or l.N",
    ),
    "automatic tag": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[i]", args=[A, B], tags={"i": "l.auto"}),
        "iname 'i' is tagged l.auto",
    ),
    "two inames on one axis": (
        dict(
            domain="{[i, j]: 0 <= i < 64 and 0 <= j < 8}",
            instructions="b[i] = a[i] {id=s1}\nb[j] = a[j] {id=s2}",
            args=[A, B],
            tags={"i": "l.0", "j": "l.0"},
        ),
        "inames 'i' and 'j' are both tagged l.0",
    ),
    "array without shape": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[i]", args=[A, lp.GlobalArg("b", np.float64)]),
        "array 'b' has no shape",
    ),
    "array without dtype": (
        dict(domain="{[i]: 0 <= i < 64}", instructions="b[i] = a[i]", args=[A, lp.GlobalArg("b", shape=(80,))]),
        "array 'b' has no dtype",
    ),
}


@pytest.mark.parametrize("case", ERRORS, ids=list(ERRORS))
def test_malformed_kernels_are_named(case):
    spec, message = ERRORS[case]
    with pytest.raises(pp.HarvestError, match=f"^loopy kernel 'k'.*{re.escape(message)}"):
        pp.harvest(_kernel(**spec))


def test_sizes_are_not_taken_from_options():
    knl = stencils.jacobi_2d((32, 32), (16, 8, 1))
    with pytest.raises(pp.HarvestError, match="fix them with lp.fix_parameters"):
        pp.harvest(knl, domain_shape=(32, 32))


# -- shared memory: local temporaries ----------------------------------------------------------------------------
A100 = pp.get_device("A100")


def box_3x3_prefetched():
    """A 3x3 box mean on 64x64 float points in 16x16 blocks, each block's 18x18 tile prefetched (lp.add_prefetch needs
    a convex footprint: the box's is, the star's is not); loopy copies each tile dimension in 2 rounds of 16."""
    terms = " + ".join(f"src[j + {dj}, i + {di}]" for dj in range(3) for di in range(3))
    knl = _kernel(
        "{[i, j]: 0 <= i, j < 64}",
        f"dst[j + 1, i + 1] = ({terms}) / 9",
        [_array("src", (66, 66), np.float32), _array("dst", (66, 66), np.float32)],
    )
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.1", inner_tag="l.1")
    return lp.add_prefetch(knl, "src", ["i_inner", "j_inner"], temporary_name="tile", default_tag="l.auto")


def tile_transpose(columns):
    """Each block transposes its 32x32 float tile through a local temporary of `columns` columns (33: padded)."""
    tile = lp.TemporaryVariable("tile", np.float32, shape=(32, columns), address_space=lp.AddressSpace.LOCAL)
    return _kernel(
        "{[bx, by, tx, ty]: 0 <= bx, by < 2 and 0 <= tx, ty < 32}",
        """
        tile[ty, tx] = a[32*by + ty, 32*bx + tx] {id=fetch}
        out[32*by + ty, 32*bx + tx] = tile[tx, ty] {dep=fetch}
        """,
        [_array("a", (64, 64), np.float32), _array("out", (64, 64), np.float32), tile],
        tags={"bx": "g.0", "by": "g.1", "tx": "l.0", "ty": "l.1"},
    )


def brute_force_wavefronts(block, accesses) -> int:
    """Wavefronts of one block's warps, lane by lane: an access of a warp takes as many as its busiest of 32 four-byte
    banks has distinct words. `accesses`: functions of (tx, ty) giving a lane's float index, None where it is idle."""
    lanes = [(tx, ty) for ty in range(block[1]) for tx in range(block[0])]  # warp order: x fastest
    total = 0
    for access in accesses:
        for first in range(0, len(lanes), 32):
            words = {access(tx, ty) for tx, ty in lanes[first : first + 32]} - {None}
            total += max(Counter(word % 32 for word in words).values(), default=0)
    return total


def test_prefetched_tile_is_a_shared_array():
    knl = box_3x3_prefetched()
    model, block = pp.harvest(knl), kernel_block(knl)
    assert block == (16, 16, 1)
    assert model.shared_arrays == (Field("tile", 4, (18, 18), (18, 1), 0, "float32"),)
    assert model.shared_memory_is_static and model.shared_memory_bytes == 18 * 18 * 4
    # the copy's rounds are no updates: the lattice is the 64x64 points, as without the prefetch
    assert [(str(loop.counter), loop.stop, loop.updates) for loop in model.loops] == [
        ("loop.src_dim_0_outer", 2, False),
        ("loop.src_dim_1_outer", 2, False),
    ]
    assert model.lattice_updates == 64 * 64 and model.flops_per_lup == 9
    ry, rx = (loop.counter for loop in model.loops)
    tx, ty = TID[:2]
    (store,) = [a for a in model.shared_accesses if a.kind is AccessKind.STORE]
    assert store.address == sp.expand(18 * (16 * ry + ty) + 16 * rx + tx)
    assert {sp.Lt(16 * ry + ty, 18), sp.Lt(16 * rx + tx, 18)} <= set(store.predicate.args)  # the tile's last rows
    loads = {a.address for a in model.shared_accesses if a.kind is AccessKind.LOAD}
    assert loads == {sp.expand(18 * (ty + dj) + tx + di) for dj in range(3) for di in range(3)}
    (load,) = model.loads  # the copy's global load stays an ordinary access, over the rounds
    assert load.address == sp.expand(66 * (BDIM[1] * BID[1] + ty + 16 * ry) + BDIM[0] * BID[0] + tx + 16 * rx)

    got = shared_requests(model, block, [(1, 1, 0)], A100)
    tile_loads = [lambda x, y, dj=dj, di=di: 18 * (y + dj) + x + di for dj in range(3) for di in range(3)]
    copies = [
        lambda x, y, oy=oy, ox=ox: 18 * (16 * oy + y) + 16 * ox + x if max(16 * oy + y, 16 * ox + x) < 18 else None
        for oy in range(2)
        for ox in range(2)
    ]
    assert got.load_wavefronts_per_lup == brute_force_wavefronts(block, tile_loads) / 256
    assert got.store_wavefronts_per_lup == brute_force_wavefronts(block, copies) / 256
    # by hand: a warp's two rows of 16 floats lie 18 apart, in banks x..x+15 and x+18..x+33, two of them shared
    assert got.load_wavefronts_per_lup == 9 * 2 / 32


@pytest.mark.parametrize("columns, load_wavefronts", [(32, 32), (33, 1)])
def test_column_reads_of_a_tile_conflict_unless_padded(columns, load_wavefronts):
    """A warp reads a column of the tile: 32 floats one row (32 words) apart all sit in one bank, one padding column
    spreads them over all 32 banks; the row-wise copy into it is conflict-free either way."""
    knl = tile_transpose(columns)
    model, block = pp.harvest(knl), kernel_block(knl)
    assert model.shared_arrays == (Field("tile", 4, (32, columns), (columns, 1), 0, "float32"),)
    tx, ty = TID[:2]
    assert [(a.kind, a.address) for a in model.shared_accesses] == [
        (AccessKind.STORE, columns * ty + tx),
        (AccessKind.LOAD, columns * tx + ty),
    ]
    got = shared_requests(model, block, [(1, 1, 0)], A100)
    assert got.load_wavefronts_per_lup == load_wavefronts / 32  # per warp of 32 updates
    assert got.store_wavefronts_per_lup == 1 / 32
    assert got.load_wavefronts_per_lup == brute_force_wavefronts(block, [lambda x, y: columns * x + y]) / 1024
    assert got.store_wavefronts_per_lup == brute_force_wavefronts(block, [lambda x, y: columns * y + x]) / 1024


def test_staged_weights_and_taps_over_a_tile():
    """A convolution with its 8 weights and its input tile prefetched: the weights' copy runs on the first 8 of 16
    threads, and the taps, which only shared loads depend on, are no updates (one update per output point)."""
    knl = _kernel(
        "{[i, k]: 0 <= i < 256 and 0 <= k < 8}",
        "dst[i] = sum(k, w[k] * src[i + k])",
        [_array("src", (263,), np.float32), _array("w", (8,), np.float32), _array("dst", (256,), np.float32)],
    )
    knl = lp.add_prefetch(knl, "src", ["i_inner", "k"], temporary_name="tile", default_tag="l.auto")
    knl = lp.add_prefetch(knl, "w", ["k"], temporary_name="taps", default_tag="l.auto")
    model = pp.harvest(lp.add_inames_for_unused_hw_axes(knl))
    assert {str(loop.counter): loop.updates for loop in model.loops} == {"loop.k": False, "loop.src_dim_0_outer": False}
    assert model.lattice_updates == 256 and model.flops_per_lup == 16
    k = sp.Symbol("loop.k", integer=True)
    shared = {(a.field, a.kind): a for a in model.shared_accesses}
    assert sp.Lt(TID[0], 8) in shared["taps", AccessKind.STORE].predicate.args
    assert shared["taps", AccessKind.LOAD].address == k and shared["tile", AccessKind.LOAD].address == k + TID[0]
    assert [a.address for a in model.loads if a.field == "w"] == [TID[0]]  # every block loads the same weights


SHARED_ERRORS = {
    "indexed by a group iname": (
        "tile[g, l] = a[16*g + l] {id=fetch}\nb[16*g + l] = tile[0, l] {dep=fetch}",
        "store of local temporary 'tile' in instruction 'fetch', index g: g uses 'g' (g.0), "
        "but a local temporary is one block's",
    ),
    "non-affine index": (
        "tile[0, l] = a[16*g + l] {id=fetch}\nb[16*g + l] = tile[0, (l*l) % 16] {id=use, dep=fetch}",
        "load of local temporary 'tile' in instruction 'use', index (l*l) % 16: Mod(l**2, 16) is not affine in the "
        "inames",
    ),
}


@pytest.mark.parametrize("case", SHARED_ERRORS, ids=list(SHARED_ERRORS))
def test_malformed_local_temporaries_are_named(case):
    instructions, message = SHARED_ERRORS[case]
    tile = lp.TemporaryVariable("tile", np.float64, shape=(4, 16), address_space=lp.AddressSpace.LOCAL)
    knl = _kernel("{[g, l]: 0 <= g < 4 and 0 <= l < 16}", instructions, [A, B, tile], tags={"g": "g.0", "l": "l.0"})
    with pytest.raises(pp.HarvestError) as err:
        pp.harvest(knl)
    assert str(err.value) == f"loopy kernel 'k': {message}"
