"""lbmpy kernels harvest like any pystencils GPU kernel (shared, session-scoped kernels)."""

import pytest

import pystencils_perf as pp

from .test_harvest import assert_matches_c_code

EXPECTED = {
    # kernel: {(field, kind): distinct accesses}
    "d3q19_srt": {("src", "load"): 19, ("dst", "store"): 19},
    "d3q27_cumulant": {("src", "load"): 27, ("dst", "store"): 27},
    "allen_cahn_phase_field": {
        ("h", "load"): 15,
        ("C", "load"): 7,
        ("u", "load"): 3,
        ("h_tmp", "store"): 15,
        ("C_tmp", "store"): 1,
    },
    "allen_cahn_hydro": {
        ("g", "load"): 27,
        ("C", "load"): 27,
        ("u", "load"): 3,
        ("g_tmp", "store"): 27,
        ("u", "store"): 3,
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lbm_kernels_harvest(lbm_kernels, name):
    kernel = lbm_kernels[name]
    model = pp.harvest(kernel)
    counts = {}
    for acc in model.accesses:
        counts[(acc.field, acc.kind.value)] = counts.get((acc.field, acc.kind.value), 0) + 1
    assert counts == EXPECTED[name]
    assert model.work_items == (32, 16, 8)
    assert model.flops_per_lup > 0
    assert_matches_c_code(kernel, model)


@pytest.mark.slow
def test_allen_cahn_phase_field_has_pull_loads_and_a_7_point_stencil(lbm_kernels):
    model = pp.harvest(lbm_kernels["allen_cahn_phase_field"])
    c = model.field_by_name("C")
    centre = model.stores[[a.field for a in model.stores].index("C_tmp")].address
    offsets = sorted(int(a.address - centre) for a in model.loads if a.field == "C")
    sx, sy, sz = sorted(c.strides)
    assert offsets == sorted([0, sx, -sx, sy, -sy, sz, -sz])
    # pull scheme: stores to h_tmp are at the cell itself, loads from h come from neighbours
    h = model.field_by_name("h")
    cell = {s: 0 for s in centre.free_symbols}
    loads_h = {int(a.address.xreplace(cell)) % h.strides[3] for a in model.loads if a.field == "h"}
    stores_h = {int(a.address.xreplace(cell)) % h.strides[3] for a in model.stores if a.field == "h_tmp"}
    assert len(stores_h) == 1 and len(loads_h) == 15


@pytest.mark.slow
def test_lbm_ranks_with_512_thread_blocks(lbm_kernels):
    ranking = pp.rank(lbm_kernels["d3q19_srt"], "V100", folds=[(1, 1, 1)])
    assert {c.launch.threads_per_block for c in ranking.candidates} == {512}
    # a streaming kernel: at least the compulsory 19 loads and 19 stores of 8 B per update
    best = ranking.best.metrics
    assert best.dram_load_bytes_per_lup >= 19 * 8 * 0.99
    assert best.dram_store_bytes_per_lup >= 19 * 8 * 0.99


def test_create_lb_kernel_refuses_a_config_that_is_no_lbm_config():
    with pytest.raises(pp.ConfigurationError, match="lbm_config must be an lbmpy LBMConfig or None, got the int 5"):
        pp.create_lb_kernel(5, device="V100")
