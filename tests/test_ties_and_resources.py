"""Ties within the model's error are said out loud and broken by a rule; registers reach every path."""

from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.adapters import cuda_compiler
from pystencils_perf.catalog import star_3d_assignments, star_3d_recipe
from pystencils_perf.models.limiters import LIMITERS_RELATIVE_ERROR
from pystencils_perf.ranking import TIE_BREAK, idle_lanes, tie_break

BLOCKS = [(32, 4, 2), (16, 8, 2), (64, 2, 2), (8, 8, 4)]


@pytest.fixture(scope="module")
def ranking():
    return pp.rank(
        star_3d_assignments(1, (64, 32, 16)),
        "V100",
        blocks=BLOCKS,
        folds=[(1, 1, 1), (1, 2, 1)],
        compile_resources=False,
        model="limiters",
    )


def test_tied_candidates_are_those_within_the_models_error(ranking):
    best = ranking.best.prediction.lups_per_second
    tied = ranking.tied
    assert tied[0] is ranking.best
    for c in ranking.candidates:
        inside = c.prediction.lups_per_second >= best * (1 - LIMITERS_RELATIVE_ERROR)
        assert (c in tied) == inside


def test_the_table_marks_a_tie_and_names_the_rule(ranking):
    table = ranking.table()
    if len(ranking.tied) > 1:
        assert f"{len(ranking.tied)} candidates (marked = or >) lie within 7.8% of the best" in table
        assert TIE_BREAK in table
        assert sum(line.startswith(("=", ">")) for line in table.splitlines()) == len(ranking.tied)
    else:
        assert "(marked = or >)" not in table


def test_the_table_says_what_limits_the_pick(ranking):
    """The candidate `select` takes, with every term of its prediction in picoseconds per update."""
    pick = pp.select(ranking)
    terms = pick.prediction.seconds_per_lup
    line = next(line for line in ranking.table(head=1).splitlines() if "the pick" in line)
    assert line == (
        f"  > {pick.launch.label}, the pick: {pick.prediction.glups:.2f} GLup/s predicted; "
        "picoseconds per update by term: "
        + ", ".join(f"{name} {1e12 * terms[name]:.1f}" for name in ("FP", "L1", "L2", "DRAM"))
    )
    assert 1e12 * max(terms.values()) == pytest.approx(1e12 / pick.prediction.lups_per_second)  # the limiter's


def test_select_breaks_ties_by_idle_lanes_then_occupancy_then_l2_traffic(ranking):
    from dataclasses import replace

    tied = ranking.tied
    assert pp.select(ranking) == tie_break(tied, 32)
    # more resident warps win over throughput and sort order; registers count only through them
    a, b = ranking.candidates[0], ranking.candidates[1]
    a, b = (replace(c, launch=pp.LaunchConfig((32, 4, 2))) for c in (a, b))  # 8 warps per block
    lean = replace(b, metrics=replace(b.metrics, registers_per_thread=20, blocks_per_sm=6))
    heavy = replace(a, metrics=replace(a.metrics, registers_per_thread=40, blocks_per_sm=3))
    assert tie_break([heavy, lean], 32) is lean
    same_occupancy = replace(heavy, metrics=replace(heavy.metrics, blocks_per_sm=6, l2_load_bytes_per_lup=1.0))
    assert (
        tie_break([replace(lean, metrics=replace(lean.metrics, l2_load_bytes_per_lup=2.0)), same_occupancy], 32)
        is same_occupancy
    )
    # equal occupancy: less L2 load traffic wins
    low = replace(b, metrics=replace(b.metrics, blocks_per_sm=4, l2_load_bytes_per_lup=1.0))
    high = replace(a, metrics=replace(a.metrics, blocks_per_sm=4, l2_load_bytes_per_lup=2.0))
    assert tie_break([high, low], 32) is low
    # a block that leaves lanes of its last warp idle loses to one that fills its warps, whatever its registers
    ragged = replace(lean, launch=pp.LaunchConfig((57, 1, 1)))
    full = replace(heavy, launch=pp.LaunchConfig((64, 1, 1)))
    assert (idle_lanes(ragged.launch, 32), idle_lanes(full.launch, 32), idle_lanes(ragged.launch, 64)) == (7, 0, 7)
    assert tie_break([ragged, full], 32) is full


def test_a_memory_bound_1d_kernel_selects_a_block_of_whole_warps():
    """Issue 26: among 1- to 60-thread blocks the model ties many for a DRAM-bound 1D stencil (idle lanes cost it
    nothing it can see); the selection takes one that fills its warps, not 49 or 57 threads."""
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[1000000]")
    update = ps.Assignment(dst[0], (src[-1] + src[0] + src[1]) / 3)
    ranking = pp.rank([update], "V100", blocks=[(n, 1, 1) for n in range(1, 61)], folds=[(1, 1, 1)])
    assert len(ranking.tied) > 1 and any(idle_lanes(c.launch, 32) for c in ranking.tied)
    assert pp.select(ranking).launch.block == (32, 1, 1)


def test_without_a_compiler_the_ranking_says_occupancy_is_assumed(ranking, monkeypatch):
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: ())
    plain = pp.rank(star_3d_assignments(1, (64, 32, 16)), "V100", blocks=BLOCKS[:1], folds=[(1, 1, 1)])
    assert plain.resources == {}
    assert "occupancy assumed from threads per block" in plain.table()
    assert "pip install nvidia-cuda-nvrtc-cu11" in plain.table()  # how to get registers without a toolkit
    assert plain.as_json()["resources"].startswith("occupancy assumed")


def _nvcc_without_volta():
    return [
        c for c in cuda_compiler.available_compilers() if isinstance(c, cuda_compiler.Nvcc) and "sm_70" not in c.archs
    ]


@pytest.mark.skipif(not _nvcc_without_volta(), reason="needs an nvcc that does not build sm_70 (nvcc 13)")
def test_a_stand_in_architecture_is_said(monkeypatch):
    """nvcc 13 alone builds a V100 kernel for sm_75; the registers can differ (58 against 32 for the range-4
    star), so the ranking says so and how to build sm_70."""
    nvcc = tuple(_nvcc_without_volta())
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: nvcc)
    ranking = pp.rank(star_3d_assignments(1, (64, 32, 16)), "V100", blocks=BLOCKS[:1], folds=[(1, 1, 1)])
    assert ranking.resources[(1, 1, 1)].arch != "sm_70"
    assert "not sm_70" in ranking.resources_note and "nvidia-cuda-nvrtc-cu11" in ranking.resources_note
    exact = pp.rank(star_3d_assignments(1, (64, 32, 16)), "A100", blocks=BLOCKS[:1], folds=[(1, 1, 1)])
    assert exact.resources[(1, 1, 1)].arch == "sm_80" and "not sm_" not in exact.resources_note


@pytest.mark.skipif(cuda_compiler.compiler_for("7.0") is None, reason="neither nvcc nor NVRTC")
@pytest.mark.slow
def test_rank_cli_and_create_kernel_see_the_same_registers(tmp_path):
    """The paper's star stencil: blocks of 1024 threads per SM as its compiled registers allow, in every path."""
    recipe = star_3d_recipe(4, (640, 512, 512))
    folds = [(1, 1, 1), (1, 2, 1)]
    ranking = pp.rank(recipe, "V100", threads=1024, folds=folds)
    assert set(ranking.resources) == set(folds)
    for c in ranking.candidates:
        assert c.metrics.blocks_per_sm == (2 if ranking.resources[c.launch.fold].registers_per_thread <= 32 else 1)
    assert "registers per fold 1x1x1:" in ranking.table(head=1)
    kernel = pp.create_kernel(recipe.assignments, recipe.config, device="V100", threads=1024, folds=folds)
    choice = kernel.metadata["pystencils_perf"]
    assert choice.resources == ranking.resources
    assert choice.launch == pp.select(ranking).launch


JACOBI_2D = Path(__file__).resolve().parent.parent / "examples" / "jacobi2d_assignments.py"


def test_a_fold_along_an_axis_the_kernel_lacks_is_rejected_in_rank_and_cli(capsys):
    """A z-fold on a 2D kernel ranked first at twice the real throughput; now rank and the CLI refuse it."""
    from pystencils_perf.cli import main
    from pystencils_perf.spec import load_spec

    assignments = load_spec(JACOBI_2D).kernel
    with pytest.raises(pp.PerfError, match="fold z = 2 exceeds the 1 point"):
        pp.rank(assignments, "V100", folds=[(1, 1, 2)], compile_resources=False)
    mixed = pp.rank(assignments, "V100", folds=[(1, 1, 1), (1, 1, 2)], compile_resources=False)
    assert {c.launch.fold for c in mixed.candidates} == {(1, 1, 1)}
    assert all("fold z = 2" in reason for launch, reason in mixed.rejected if launch.fold == (1, 1, 2))
    assert main(["rank", str(JACOBI_2D), "--device", "V100", "--fold", "1x1x2"]) == 2
    assert "fold z = 2 exceeds the 1 point(s) of the iteration space along z" in capsys.readouterr().err


def test_create_kernel_refuses_the_same_fold():
    from pystencils_perf.spec import load_spec

    assignments = load_spec(JACOBI_2D).kernel
    with pytest.raises(pp.PerfError, match="fold z = 2 exceeds the 1 point"):
        pp.create_kernel(assignments, device="V100", folds=[(1, 1, 2)], nvcc=False)


def test_the_table_and_the_json_name_the_pick_of_an_installed_selection_plugin(ranking):
    """A third-party `perf_select` plugin: the tie line, the row marked > and the JSON's "selected" all name its
    pick, not the built-in tie-break's; a ranking keeps the pick of the plugins `rank` (or `select`) asked."""
    assert len(ranking.tied) > 1
    default = tie_break(ranking.tied, 32)
    other = next(c for c in ranking.tied if c is not default)

    class PickOther:
        @pp.hookspecs.hookimpl(tryfirst=True)
        def perf_select(self, ranking):
            return next(c for c in ranking.tied if c.launch == other.launch)

    pm = pp.get_plugin_manager()
    plugin = PickOther()
    pm.register(plugin)
    try:
        ranked_with_it = pp.rank(
            star_3d_assignments(1, (64, 32, 16)),
            "V100",
            blocks=BLOCKS,
            folds=[(1, 1, 1), (1, 2, 1)],
            compile_resources=False,
            model="limiters",
            jobs=1,
        )
        chosen = pp.select(ranking)  # the fixture's ranking, asked again
    finally:
        pm.unregister(plugin)
    assert chosen is other
    for either in (ranked_with_it, ranking):
        table, selected = either.table(), either.as_json()["selected"]
        assert f"select() takes {other.launch.label} as an installed selection plugin (perf_select) chooses" in table
        marked = [line for line in table.splitlines() if line.startswith(">")]
        assert len(marked) == 1 and marked[0][1:].split()[1:3] == [
            "x".join(map(str, other.launch.block)),
            "x".join(map(str, other.launch.fold)),
        ]
        assert (tuple(selected["block"]), tuple(selected["fold"])) == (other.launch.block, other.launch.fold)
    assert pp.select(ranking) is default  # the plugin is gone: the built-in rule again
    assert TIE_BREAK in ranking.table()


def _jacobi_2d_assignments():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[66, 66]")
    return [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]


def _unmeasured_note(kernel, device) -> str:
    ranking = pp.rank(kernel, device, blocks=[(32, 1, 1)], folds=[(1, 1, 1)])
    assert ranking.resources == {}
    return ranking.resources_note


@pytest.mark.skipif(cuda_compiler.compiler_for("7.0") is None, reason="neither nvcc nor NVRTC: the note names them")
def test_registers_not_measured_with_a_compiler_installed_name_the_kernel():
    """With nvcc or NVRTC installed the note blamed their absence: it names the kernel that cannot be compiled."""
    import dataclasses

    import pystencils as ps
    from pystencils_perf_cuda import Array, CudaKernel

    from pystencils_perf.errors import PerfWarning

    hip = ps.create_kernel(_jacobi_2d_assignments(), ps.CreateKernelConfig(target=ps.Target.HIP))
    with pytest.warns(PerfWarning, match="does not run there"):
        hip_note = _unmeasured_note(hip, "V100")
    assert "kernel 'kernel' is Target.HIP code, and V100-PCIe-32GB, an NVIDIA GPU, runs Target.CUDA code" in hip_note
    copy = CudaKernel(
        name="copy",
        arrays=(Array("a", "float", (4096,)), Array("b", "float", (4096,))),
        threads=(4096,),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x"},
        loads=("a[x]",),
        stores=("b[x]",),
    )
    copy_note = _unmeasured_note(copy, "V100")
    assert "CUDA kernel 'copy' is a description without `source`: no code to compile" in copy_note
    intel = dataclasses.replace(pp.get_device("V100"), vendor="intel")
    cuda = ps.create_kernel(_jacobi_2d_assignments(), ps.CreateKernelConfig(target=ps.Target.CUDA))
    intel_note = _unmeasured_note(cuda, intel)
    assert "pystencils-perf compiles for no GPU of vendor 'intel'" in intel_note
    assert not any("neither nvcc" in note for note in (hip_note, copy_note, intel_note))
