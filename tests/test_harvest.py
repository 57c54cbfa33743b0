import pytest

import pystencils_perf as pp
from pystencils_perf.kernel import BDIM, BID, TID

from .c_addresses import accesses_at

BLOCK = (8, 4, 2)
THREADS = [((1, 2, 1), (0, 0, 0)), ((3, 0, 1), (2, 1, 3)), ((7, 3, 0), (1, 5, 2))]


def harvested_at(model, tid, bid, bdim):
    values = dict(zip(TID, tid)) | dict(zip(BID, bid)) | dict(zip(BDIM, bdim))
    found = {}
    for acc in model.accesses:
        found.setdefault((acc.field, acc.kind.value), set()).add(int(acc.address.xreplace(values)))
    return {k: sorted(v) for k, v in found.items()}


def assert_matches_c_code(kernel, model):
    code = kernel.get_c_code()
    for tid, bid in THREADS:
        assert harvested_at(model, tid, bid, BLOCK) == accesses_at(code, tid, bid, BLOCK)


def test_jacobi_2d(jacobi_kernel):
    model = pp.harvest(jacobi_kernel)
    assert len(model.loads) == 4 and len(model.stores) == 1
    assert model.work_items == (64, 64, 1)
    assert model.lattice_updates == 64 * 64
    assert_matches_c_code(jacobi_kernel, model)
    src = model.field_by_name("src")
    assert (src.element_bytes, src.shape, src.strides) == (8, (66, 66), (66, 1))


def test_star_3d_range4(star_r4_kernel):
    model = pp.harvest(star_r4_kernel)
    assert len(model.loads) == 25 and len(model.stores) == 1
    assert model.work_items == (640, 512, 512)
    src = model.field_by_name("src")
    centre = model.stores[0].address
    offsets = sorted(int(acc.address - centre) for acc in model.loads)
    expected = sorted(s * r * stride for stride in src.strides for r in range(1, 5) for s in (-1, 1)) + [0]
    assert offsets == sorted(expected)
    assert_matches_c_code(star_r4_kernel, model)


def test_guard_is_a_predicate_not_an_access(jacobi_kernel):
    model = pp.harvest(jacobi_kernel)
    inside = dict(zip(TID, (0, 0, 0))) | dict(zip(BID, (7, 7, 0))) | dict(zip(BDIM, (8, 8, 1)))
    outside = dict(inside) | {BID[0]: 8}
    assert bool(model.domain.xreplace(inside)) is True
    assert bool(model.domain.xreplace(outside)) is False
    assert all(acc.predicate == model.domain for acc in model.accesses)


def test_repeated_load_counts_once():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[16, 16]")
    asm = [ps.Assignment(dst[0, 0], src[0, 1] * src[0, 1] + src[0, 1])]
    model = pp.harvest(asm)
    assert len(model.loads) == 1


def test_flops_from_generated_code(jacobi_kernel):
    # pystencils' counter on the lowered code: it distributes the 1/4 (four multiplications,
    # three additions) and hoists the constant 1.0/4.0 (one division per thread)
    assert pp.harvest(jacobi_kernel).flops_per_lup == 8


def test_variable_size_fields_need_a_domain_shape():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[3D]")
    asm = [ps.Assignment(dst[0, 0, 0], src[1, 0, 0] + src[0, 0, -1])]
    with pytest.raises(pp.HarvestError, match="field 'dst' has variable size|field 'src' has variable size"):
        pp.harvest(asm)
    model = pp.harvest(asm, domain_shape=(10, 12, 14))
    assert model.field_by_name("src").strides == (12 * 14, 14, 1)
    assert model.work_items == (12, 10, 8)
    with pytest.raises(pp.HarvestError, match="3 spatial dimensions"):
        pp.harvest(asm, domain_shape=(10, 12))


def test_alignment_options(star_r4_kernel):
    base = pp.harvest(star_r4_kernel)
    interior = pp.harvest(star_r4_kernel, align="interior")
    assert {f.base_offset_bytes for f in base.fields} == {0}
    for f in interior.fields:
        first = 4 * sum(f.strides)  # ghost layers 4 on each axis
        assert (f.base_offset_bytes + first * 8) % 256 == 0
    with pytest.raises(pp.ConfigurationError, match="alignment"):
        pp.harvest(star_r4_kernel, align="middle")


def test_cpu_kernel_is_rejected():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[8, 8]")
    kernel = ps.create_kernel([ps.Assignment(dst[0, 0], src[1, 0])], ps.CreateKernelConfig(target=ps.Target.CPU))
    with pytest.raises(pp.HarvestError, match="not a GPU.*Target.CUDA"):
        pp.harvest(kernel)


def _custom_field(name, shape):
    import pystencils as ps

    return ps.Field.create_fixed_size(name, shape, dtype="double", field_type=ps.FieldType.CUSTOM)


def test_indirect_address_is_rejected():
    import pystencils as ps

    idx, dst = ps.fields("idx: int64[32]"), ps.fields("dst: double[32]")
    src = _custom_field("src", (32,))
    asm = [ps.Assignment(dst[0], src.absolute_access((idx[0],), ()))]
    with pytest.raises(pp.HarvestError, match="load of field 'src': indirect .* field 'idx'"):
        pp.harvest(asm)


def test_non_affine_address_is_rejected():
    import pystencils as ps

    x, y = _custom_field("x", (32, 32)), ps.fields("y: double[32, 32]")
    c = ps.DEFAULTS.spatial_counters
    asm = [ps.Assignment(y[0, 0], x.absolute_access((c[0] * c[1], 0), ()))]
    with pytest.raises(pp.HarvestError, match="load of field 'x': .* not affine"):
        pp.harvest(asm)


def test_unknown_object_is_rejected():
    with pytest.raises(pp.HarvestError, match="no adapter plugin recognises a builtins.str"):
        pp.harvest("not a kernel")


def test_folding_substitutes_addresses(star_r4_kernel):
    model = pp.harvest(star_r4_kernel).folded((1, 1, 2))
    assert model.work_items == (640, 512, 256)
    assert model.lattice_updates == 640 * 512 * 512
    (loop,) = model.loops
    assert list(loop.values) == [0, 1]
    store = model.stores[0].address
    values = dict(zip(TID, (0, 0, 1))) | dict(zip(BID, (0, 0, 0))) | dict(zip(BDIM, (1, 1, 1)))
    plane = model.field_by_name("dst").strides[0]
    assert store.xreplace(values | {loop.counter: 1}) - store.xreplace(values | {loop.counter: 0}) == plane
