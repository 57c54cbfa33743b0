"""`create_kernel` and `create_lb_kernel`: ordinary pystencils kernels carrying the chosen launch."""

import math
import re

import pytest

import pystencils_perf as pp
from pystencils_perf.adapters.cuda_compiler import compiler_for
from pystencils_perf.adapters.pystencils.folding import FoldedLaunchConfiguration
from pystencils_perf.catalog import star_3d_assignments
from pystencils_perf.hookspecs import hookimpl

DOMAIN = (64, 32, 16)
BLOCKS = [(32, 4, 2), (16, 8, 2), (64, 2, 2)]
FOLDS = [(1, 1, 1), (1, 2, 1), (1, 1, 2)]


@pytest.fixture(scope="module")
def star_r1():
    return star_3d_assignments(1, DOMAIN)


def launched(kernel):
    """(block, fold, threads per axis) of a generated kernel's launch configuration."""
    config = kernel.get_launch_configuration()
    fold = config.fold if isinstance(config, FoldedLaunchConfiguration) else (1, 1, 1)
    block, grid = config.evaluate()
    return block, fold, pp.harvest(kernel).work_items, grid


def test_create_kernel_applies_the_best_candidate(star_r1):
    from pystencils.codegen import GpuKernel

    kernel = pp.create_kernel(star_r1, device="V100", blocks=BLOCKS, folds=FOLDS, nvcc=False)
    assert isinstance(kernel, GpuKernel)
    choice = kernel.metadata["pystencils_perf"]
    assert isinstance(choice, pp.KernelChoice)
    assert choice.chosen in choice.ranking.tied and choice.device.name == "V100-PCIe-32GB"
    assert choice.chosen == pp.select(choice.ranking)  # the documented tie-break, not sort order
    assert len(choice.ranking.candidates) == len(BLOCKS) * len(FOLDS)
    block, fold, work, grid = launched(kernel)
    assert (block, fold) == (choice.launch.block, choice.launch.fold)
    assert work == tuple(-(-n // f) for n, f in zip(DOMAIN, fold))
    assert grid == tuple(-(-w // b) for w, b in zip(work, block))
    assert choice.summary() in choice.report(head=3)


def test_a_folded_choice_is_generated_folded(star_r1):
    kernel = pp.create_kernel(star_r1, device="H100", blocks=BLOCKS, folds=[(1, 2, 1)], nvcc=False)
    block, fold, work, _ = launched(kernel)
    assert fold == (1, 2, 1) and work == (64, 16, 16)
    model = pp.harvest(kernel)
    assert model.fold == (1, 2, 1) and model.lattice_updates == math.prod(DOMAIN)


class _PickTheWorst:
    @hookimpl(tryfirst=True)
    def perf_select(self, ranking):
        return ranking.candidates[-1]


def test_the_perf_select_plugins_decide(star_r1):
    pm = pp.get_plugin_manager()
    plugin = pm.register(_PickTheWorst())
    try:
        kernel = pp.create_kernel(star_r1, device="V100", blocks=BLOCKS, folds=FOLDS, nvcc=False)
    finally:
        pm.unregister(name=plugin)
    choice = kernel.metadata["pystencils_perf"]
    worst = choice.ranking.candidates[-1].launch
    assert choice.launch == worst != choice.ranking.best.launch
    assert launched(kernel)[:2] == (worst.block, worst.fold)


@pytest.mark.slow
@pytest.mark.skipif(compiler_for("7.0") is None, reason="neither nvcc nor NVRTC: registers cannot be compiled")
def test_registers_of_each_fold_limit_occupancy():
    """A V100 SM holds two 1024-thread blocks at up to 32 registers a thread, one above: each fold's own count decides."""
    star = star_3d_assignments(4, (64, 63, 64))  # 63 rows: the second point of a y-fold keeps its guard
    space = dict(device="V100", blocks=[(16, 8, 8)], folds=[(1, 1, 1), (1, 2, 1)])
    choice = pp.create_kernel(star, **space).metadata["pystencils_perf"]
    assert set(choice.resources) == {(1, 1, 1), (1, 2, 1)}
    compiler, arch = compiler_for("7.0")
    assert {(r.arch, r.compiler) for r in choice.resources.values()} == {(arch, compiler.name)}
    assert choice.resources[(1, 2, 1)].registers_per_thread > 32  # two rows of 9 loads each in flight
    for candidate in choice.ranking.candidates:
        registers = choice.resources[candidate.launch.fold].registers_per_thread
        expected = (2, "threads") if registers <= 32 else (1, "registers")
        assert (candidate.metrics.blocks_per_sm, candidate.metrics.occupancy_limited_by) == expected
    unmeasured = pp.create_kernel(star, nvcc=False, **space).metadata["pystencils_perf"]
    assert {c.metrics.blocks_per_sm for c in unmeasured.ranking.candidates} == {2}
    assert unmeasured.resources == {}


@pytest.mark.slow
def test_create_lb_kernel():
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil

    from pystencils_perf.adapters.pystencils.lbm import create_lb_kernel

    kernel = create_lb_kernel(
        LBMConfig(stencil=LBStencil(Stencil.D3Q19), method=Method.SRT, relaxation_rate=1.8),
        LBMOptimisation(field_size=(16, 8, 8)),
        device="H100", blocks=[(16, 8, 4), (16, 4, 8)], folds=[(1, 1, 1), (1, 1, 2)], nvcc=False,
    )  # fmt: skip
    choice = kernel.metadata["pystencils_perf"]
    assert launched(kernel)[:2] == (choice.launch.block, choice.launch.fold)
    assert len(pp.harvest(kernel).stores) == 19 * math.prod(choice.launch.fold)


def test_unknown_device_is_a_clear_error(star_r1):
    with pytest.raises(pp.DeviceError, match="Z80"):
        pp.create_kernel(star_r1, device="Z80")


# -- bad input to the API: one PerfError naming the problem, never a default silently put in its place ----------


@pytest.mark.parametrize("value", [None, [], "ranking"])
def test_select_takes_only_a_ranking(value):
    with pytest.raises(pp.ConfigurationError, match="select takes the Ranking that rank\\(\\) returns, got"):
        pp.select(value)


@pytest.mark.parametrize("option", ["blocks", "folds"])
def test_empty_blocks_or_folds_are_refused(star_r1, option):
    """The command line refuses an empty --blocks; an empty list must not quietly mean the default space either."""
    with pytest.raises(pp.ConfigurationError, match=f"no {option[:-1]} given"):
        pp.rank(star_r1, "V100", compile_resources=False, **{option: []})


def test_blocks_and_folds_as_the_command_line_writes_them(star_r1):
    ranking = pp.rank(star_r1, "V100", blocks="32x4x2, 16x8x2", folds="1x1x1,1x2x1", compile_resources=False)
    launches = {(c.launch.block, c.launch.fold) for c in ranking.candidates}
    assert launches == {(b, f) for b in [(32, 4, 2), (16, 8, 2)] for f in [(1, 1, 1), (1, 2, 1)]}


@pytest.mark.parametrize(
    "blocks, message",
    [
        ("32x4", "block '32x4' is not of the form AxBxC"),
        ([(32.0, 4, 8)], "block \\(32.0, 4, 8\\) is not three positive integers"),
        ([32, 4, 8], "block 32 is not three positive integers"),
        (32, "blocks must be a list of triples like \\(32, 4, 8\\) or a string like '32x4x8,16x8x8', got 32"),
    ],
)
def test_malformed_blocks_say_the_form(star_r1, blocks, message):
    with pytest.raises(pp.ConfigurationError, match=message):
        pp.rank(star_r1, "V100", blocks=blocks, compile_resources=False)


def test_a_domain_shape_for_fixed_size_fields_is_refused(star_r1):
    """It used to be ignored: the ranking was of the fields' own size, not of the shape asked for."""
    with pytest.raises(
        pp.HarvestError,
        match="field '(src|dst)' has the fixed shape \\(18, 34, 66\\): the domain "
        "shape \\(1000, 1000, 1000\\) does not apply",
    ):
        pp.rank(star_r1, "V100", domain_shape=(1000, 1000, 1000), compile_resources=False)


def _variable_size_copy():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[3D]")
    return [ps.Assignment(dst[0, 0, 0], src[1, 0, 0] + src[-1, 0, 0])]


@pytest.mark.parametrize("shape", [(0, 0, 0), (-4, 64, 64), (64, 64, 64, 64), "64x0x8", (64.5, 8, 8)])
def test_an_empty_or_negative_domain_shape_is_named(shape):
    """The shape itself is checked before it becomes an empty iteration space ("exceeds the -2 point(s)")."""
    with pytest.raises(pp.ConfigurationError, match=f"domain (shape )?{re.escape(repr(shape))} is not"):
        pp.rank(_variable_size_copy(), "V100", domain_shape=shape, compile_resources=False)


def test_a_domain_shape_as_the_command_line_writes_it():
    assert pp.harvest(_variable_size_copy(), domain_shape="8x16x32").fields[0].shape == (8, 16, 32)


@pytest.mark.parametrize("shape", [(2, 2, 2), (2, 30, 30)])
def test_an_empty_interior_names_the_fields(shape):
    """Fields no larger than the stencil's border: said as such, not as a fold exceeding 0 points."""
    with pytest.raises(
        pp.HarvestError,
        match=f"kernel 'kernel' updates no point: its interior is empty \\('dst' of shape {re.escape(str(shape))}",
    ):
        pp.rank(_variable_size_copy(), "V100", domain_shape=shape, compile_resources=False)


@pytest.mark.parametrize("empty", [[], ()])
def test_an_empty_kernel_is_named(empty):
    with pytest.raises(pp.HarvestError, match="the kernel is empty: .* holds no assignments"):
        pp.rank(empty, "V100")


def test_a_cpu_configuration_is_refused(star_r1):
    """create_kernel used to return a CUDA kernel for CreateKernelConfig(target=Target.CPU) without a word."""
    import pystencils as ps

    with pytest.raises(pp.ConfigurationError, match="the CreateKernelConfig targets Target.CPU, not a GPU"):
        pp.create_kernel(star_r1, ps.CreateKernelConfig(target=ps.Target.CPU), device="H100", nvcc=False)
    kernel = pp.create_kernel(star_r1, ps.CreateKernelConfig(), device="H100", blocks=BLOCKS, nvcc=False)
    assert kernel.target == ps.Target.CUDA  # a configuration without a target is still welcome


def test_a_symbolic_offset_names_the_access():
    """pystencils cannot size the ghost layers of src[k, 0, 0] (TypeError: Cannot convert symbols to int)."""
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[32, 32, 32]")
    k = ps.TypedSymbol("k", "int64")
    assignments = [ps.Assignment(dst[0, 0, 0], src[k, 0, 0] + src[1, 0, 0])]
    message = "access src\\[k, 0, 0\\] in the assignment to dst\\[0,0,0\\] has a non-constant offset \\(k\\)"
    with pytest.raises(pp.HarvestError, match=message):
        pp.rank(assignments, "V100")
    with pytest.raises(pp.HarvestError, match=message):
        pp.create_kernel(assignments, device="V100", nvcc=False)


@pytest.mark.parametrize("config, named", [("CUDA", "the str 'CUDA'"), (64, "the int 64")])
def test_a_config_that_is_not_a_create_kernel_config_is_named(star_r1, config, named):
    """``create_kernel(assignments, "CUDA")`` ended in "'str' object has no attribute 'copy'"."""
    with pytest.raises(
        pp.ConfigurationError, match=f"config must be a pystencils CreateKernelConfig or None, got {named}"
    ):
        pp.create_kernel(star_r1, config, device="V100", nvcc=False)


def test_the_summary_says_that_nvcc_false_switched_registers_off(star_r1):
    choice = pp.create_kernel(star_r1, device="V100", blocks=BLOCKS[:1], folds=FOLDS[:1], nvcc=False).metadata[
        "pystencils_perf"
    ]
    assert choice.summary().endswith("registers not measured (nvcc=False)")


def test_one_default_device_everywhere():
    """rank defaulted to the V100, create_kernel and create_lb_kernel to the A100 (issue 57, item 2)."""
    import inspect

    from pystencils_perf.launch import DEFAULT_DEVICE
    from pystencils_perf_kernel_tuner import prune

    for function in (pp.rank, pp.create_kernel, pp.create_lb_kernel, prune):
        assert inspect.signature(function).parameters["device"].default == DEFAULT_DEVICE, function.__name__


def test_rank_takes_one_options_object_or_the_keywords_not_both():
    """create_kernel packed its RankOptions, unpacked them into rank's keywords, and rank packed them again (issue
    57, item 2): the object is passed on as it is."""
    from pystencils_perf.catalog import star_3d_assignments
    from pystencils_perf.errors import ConfigurationError
    from pystencils_perf.launch import Layout, RankOptions

    assignments = star_3d_assignments(1, (64, 32, 16))
    options = RankOptions.of(blocks=[(32, 2, 1), (16, 4, 1)], folds=[(1, 1, 1)], model="limiters")
    by_object = pp.rank(assignments, "V100", options=options, compile_resources=False, jobs=1)
    by_keywords = pp.rank(
        assignments,
        "V100",
        blocks=[(32, 2, 1), (16, 4, 1)],
        folds=[(1, 1, 1)],
        model="limiters",
        compile_resources=False,
        jobs=1,
    )
    assert [c.prediction for c in by_object.candidates] == [c.prediction for c in by_keywords.candidates]
    with pytest.raises(ConfigurationError, match="not both"):
        pp.rank(assignments, "V100", options=options, threads=64)
    by_layout = pp.rank(
        assignments, "V100", options=options, layout=Layout(align="interior"), compile_resources=False, jobs=1
    )
    by_align = pp.rank(assignments, "V100", options=options, align="interior", compile_resources=False, jobs=1)
    assert [c.prediction for c in by_layout.candidates] == [c.prediction for c in by_align.candidates]
    with pytest.raises(ConfigurationError, match="not both"):
        pp.rank(assignments, "V100", layout=Layout(align="interior"), domain_shape=(64, 32, 16))
