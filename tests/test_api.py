"""`create_kernel` and `create_lb_kernel`: ordinary pystencils kernels carrying the chosen launch."""

import math

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
