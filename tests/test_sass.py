"""The loads' waits read in NVIDIA SASS (`pystencils_perf.adapters.sass`)."""

import shutil
from pathlib import Path

import pytest

from pystencils_perf.adapters import cuda_compiler, sass
from pystencils_perf.errors import PerfError

DATA = Path(__file__).parent / "data"
SOURCE = DATA / "sass_batches.cu"
DISASSEMBLY = (DATA / "sass_batches_sm_80.sass").read_text()


def test_a_batch_of_loads_consumed_over_four_scoreboards_is_one_wait():
    # each batch of 8 loads writes scoreboards 2-5 and its sum waits on each in turn: 8 waits on loads,
    # 2 of them on loads issued since the warp last waited
    counts = sass.sass_counts(DISASSEMBLY, "two_batches")
    assert (counts.loads, counts.waits, counts.fma_instructions, counts.looped) == (16, 2, 8, False)


def test_instructions_are_counted_without_the_padding_after_exit():
    # 56 instructions in the section: 11 NOPs and the branch to itself after EXIT are never issued
    assert sass.sass_counts(DISASSEMBLY, "two_batches").instructions == 44


def test_a_rolled_loop_is_seen_and_counted_once():
    counts = sass.sass_counts(DISASSEMBLY, "rolled")
    assert (counts.loads, counts.waits, counts.fma_instructions, counts.looped) == (1, 1, 1, True)
    assert not counts.loop_loads_without_fma  # its FMA is in the loop: the FMAs count its trips


def test_shared_loads_are_counted():
    # four reads of the block's tile, none of global memory's (the copy's load is an LDG)
    counts = sass.sass_counts(DISASSEMBLY, "shared_tile")
    assert (counts.shared_load_words, counts.loads, counts.fma_instructions) == (4, 1, 4)
    assert sass.sass_counts(DISASSEMBLY, "two_batches").shared_load_words == 0


def test_the_self_branch_after_exit_is_no_loop():
    assert "BRA `(.L_x_" in DISASSEMBLY.split(".text.two_batches:", 1)[1]
    assert not sass.sass_counts(DISASSEMBLY, "two_batches").looped


def test_a_kernel_not_in_the_disassembly_is_named():
    with pytest.raises(PerfError, match="no kernel 'missing'"):
        sass.sass_counts(DISASSEMBLY, "missing")


@pytest.mark.skipif(shutil.which("nvcc") is None or sass.find_nvdisasm() is None, reason="needs nvcc and nvdisasm")
def test_a_fresh_compile_reads_as_the_recorded_disassembly(tmp_path):
    compiler = cuda_compiler.Nvcc(shutil.which("nvcc"))
    if "sm_80" not in compiler.archs:
        pytest.skip("this nvcc does not build sm_80")
    cubin = tmp_path / "k.cubin"
    compiler.ptxas_report(SOURCE.read_text(), "two_batches", "sm_80", (), cubin=cubin)
    nvdisasm = sass.find_nvdisasm()
    for function in ("two_batches", "rolled", "shared_tile"):
        assert sass.cubin_counts(cubin, function, nvdisasm) == sass.sass_counts(DISASSEMBLY, function)
