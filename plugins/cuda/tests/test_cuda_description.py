"""Described hand-written CUDA kernels: consequences that follow from the hardware, and clear errors."""

import re
import warnings
from dataclasses import replace
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-cuda-test-")

import pytest  # noqa: E402
import sympy as sp  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.adapters import hip_compiler  # noqa: E402
from pystencils_perf.adapters.cuda_compiler import compiler_for  # noqa: E402
from pystencils_perf.errors import PerfWarning  # noqa: E402
from pystencils_perf.kernel import BDIM, BID, TID  # noqa: E402
from pystencils_perf_cuda import Array, CudaKernel, SharedArray, from_dict, load  # noqa: E402
from pystencils_perf_cuda.examples import matvec, transpose  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SECTOR_BYTES, BANKS, BANK_BYTES = 32, 16, 8  # V100 L1: 32-B sectors, 16 banks of 8 B


def metrics(kernel, block):
    return pp.rank(kernel, "V100", blocks=[block], folds=[(1, 1, 1)]).best.metrics


def test_registered_through_its_entry_point():
    pm = pp.get_plugin_manager()
    assert "cuda" in {name for name, _ in pm.list_name_plugin()}
    assert "pystencils-perf-cuda" in {dist.project_name for _, dist in pm.list_plugin_distinfo()}


@pytest.mark.parametrize("dtype, element_bytes", [("double", 8), ("float", 4)])
def test_transpose_strided_reads_cost_what_sectors_and_banks_say(dtype, element_bytes):
    """A warp of 32 threads reads 32 consecutive elements (coalesced) or 32 elements a row apart (strided)."""
    coalesced = metrics(transpose(2048, "coalesced", dtype), (32, 8, 1))
    strided = metrics(transpose(2048, "strided", dtype), (32, 8, 1))
    # sectors: coalesced, 32 elements fill 32*size/32 sectors; strided, every element has its own sector
    sector_ratio = SECTOR_BYTES // element_bytes
    assert coalesced.l1_requested_bytes_per_lup == element_bytes
    assert strided.l1_requested_bytes_per_lup == sector_ratio * coalesced.l1_requested_bytes_per_lup
    # banks: a group that fills one wavefront (16 doubles, 32 floats) needs 1 cycle coalesced; strided by
    # 2048 elements, every address of the group falls into one bank: one cycle per thread of the group
    group = BANKS * BANK_BYTES // element_bytes
    assert coalesced.l1_cycles_per_lup == pytest.approx(1 / group)
    assert strided.l1_cycles_per_lup == pytest.approx(1.0)
    # the writes go the other way round: the coalesced-read version writes down columns
    assert coalesced.l2_store_bytes_per_lup == sector_ratio * strided.l2_store_bytes_per_lup
    # what comes from DRAM is the matrix once either way (every sector is used by the block that loads it)
    assert coalesced.dram_load_bytes_per_lup == pytest.approx(element_bytes, rel=0.01)
    assert strided.dram_load_bytes_per_lup == pytest.approx(element_bytes, rel=0.01)


def test_matvec_row_major_is_strided_per_warp():
    """y = A x, one thread per row, looping over 64 columns: every (row, column) is one update."""
    row, column = metrics(matvec(4096, 64, "row"), (128, 1, 1)), metrics(matvec(4096, 64, "column"), (128, 1, 1))
    # x[j] is one broadcast sector per warp: 32 B / 32 threads; A is 32 B (row-major) or 8 B (column-major)
    assert row.l1_requested_bytes_per_lup == 32 + 1 and column.l1_requested_bytes_per_lup == 8 + 1
    # per half-warp and column: A needs 16 cycles (all in one bank, rows are 64 doubles apart) or 1; x needs 1
    assert row.l1_cycles_per_lup == pytest.approx((16 + 1) / 16)
    assert column.l1_cycles_per_lup == pytest.approx((1 + 1) / 16)
    # the block needs the same sectors either way; the strided one asks for each four times, so L1 misses cost
    assert row.l1_compulsory_bytes_per_lup == column.l1_compulsory_bytes_per_lup == 8 + 8 * 64 / (128 * 64)
    assert row.l2_load_bytes_per_lup > column.l2_load_bytes_per_lup
    assert row.dram_load_bytes_per_lup == pytest.approx(column.dram_load_bytes_per_lup, rel=0.01)


def test_toml_describes_the_same_kernel_as_python():
    described = pp.harvest(load(EXAMPLES / "transpose.toml"))
    built = pp.harvest(transpose(2048, "coalesced"))
    assert described.accesses == built.accesses and described.fields == built.fields
    assert described.domain == built.domain and described.work_items == (2048, 2048, 1)


def test_flat_indices_default_guard_strides_and_offsets():
    kernel = CudaKernel(
        name="copy",
        arrays=(Array("a", "float", (64, 32), order="F", base_offset_bytes=260), Array("b", "float", (2048,))),
        threads=(2048,),
        loads=("a[t]",),
        stores=("b[t]",),
        indices={"t": "blockIdx.x*blockDim.x + threadIdx.x"},
    )
    model = pp.harvest(kernel)
    t = BDIM[0] * BID[0] + TID[0]
    assert model.domain == sp.Lt(t, 2048)
    assert model.fields[0].strides == (1, 64) and model.fields[0].base_offset_bytes == 4
    assert [a.address for a in model.accesses] == [t, t]
    assert pp.harvest(kernel, base_offsets_bytes={"b": 128}).fields[1].base_offset_bytes == 128


def test_a_description_ranks_with_folding():
    ranking = pp.rank(transpose(512), "V100", threads=256)
    assert {c.launch.fold for c in ranking.candidates} == {(1, 1, 1), (1, 2, 1)}


GOOD = dict(
    name="k",
    arrays=(Array("a", "double", ("n",)), Array("b", "double", ("n",))),
    threads=("n",),
    loads=("a[i]",),
    stores=("b[i]",),
    indices={"i": "blockIdx.x * blockDim.x + threadIdx.x"},
    constants={"n": 1024},
)
MALFORMED = {
    "unknown array": (dict(loads=("c[i]",)), "load 'c[i]': unknown array 'c' (arrays: a, b)"),
    "product of thread indices": (
        dict(loads=("a[threadIdx.x * threadIdx.y]",)),
        "is not affine in the thread and block indices",
    ),
    "index squared": (dict(stores=("b[i * i]",)), "store 'b[i * i]'"),
    "division of a thread index": (
        dict(loads=("a[i / 2]",)),
        "integer division or remainder of a non-constant is not affine",
    ),
    "remainder of a thread index": (dict(loads=("a[i % 32]",)), "not affine"),
    "unknown dtype": (
        dict(arrays=(Array("a", "real", ("n",)), Array("b", "double", ("n",)))),
        "array 'a': unknown dtype 'real'",
    ),
    "missing shape": (dict(arrays=(Array("a", "double", ()), Array("b", "double", ("n",)))), "array 'a' has no shape"),
    "unknown name": (dict(loads=("a[j]",)), "unknown name 'j' (known: n, i"),
    "unknown size": (dict(threads=("m",)), "threads: 'm': unknown name 'm'"),
    "gridDim": (dict(loads=("a[gridDim.x]",)), "gridDim is not modelled"),
    "index count": (dict(loads=("a[i][0]",)), "2 indices for the 1 dimensions of 'a'"),
    "syntax": (dict(loads=("a[i +]",)), "load 'a[i +]': cannot parse it"),
    "not an access": (dict(loads=("a",)), "not of the form name[index]"),
    "or in a guard": (dict(guard="i < n || i > 4"), "comparisons joined by 'and'"),
    "guard on a thread product": (dict(guard="threadIdx.x * threadIdx.y < n"), "not affine"),
    "loop bound": (dict(loops={"j": (0, "threadIdx.x")}), "loop 'j': 'threadIdx.x' is not an integer"),
    "no store": (dict(stores=()), "has no store"),
    "self-referencing index": (dict(indices={"i": "i + 1"}), "index 'i' is defined through itself"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_descriptions_are_named(case):
    change, message = MALFORMED[case]
    with pytest.raises(pp.HarvestError, match=f"^CUDA kernel 'k'.*{re.escape(message)}"):
        pp.harvest(replace(CudaKernel(**GOOD), **change))


def test_options_the_description_owns_are_refused():
    with pytest.raises(pp.HarvestError, match="alignment come from the description"):
        pp.harvest(CudaKernel(**GOOD), align="interior")


TOML_ERRORS = {
    "unknown key": ("name = 'k'\nthreads = [8]\narrays = []\nblock = [32]\n", "unknown key 'block'"),
    "missing key": ("name = 'k'\narrays = []\n", "missing key 'threads'"),
    "array without shape": (
        "name = 'k'\nthreads = [8]\n[[arrays]]\nname = 'a'\ndtype = 'double'\n",
        "arrays[0]: missing key 'shape'",
    ),
    "unknown array key": (
        "name = 'k'\nthreads = [8]\n[[arrays]]\nname = 'a'\ndtype = 'double'\nshape = [8]\nlayout = 'C'\n",
        "arrays[0]: unknown key 'layout'",
    ),
    "not TOML": ("name = \n", "not valid TOML"),
}


@pytest.mark.parametrize("case", TOML_ERRORS, ids=list(TOML_ERRORS))
def test_malformed_toml_is_named(case, tmp_path):
    text, message = TOML_ERRORS[case]
    path = tmp_path / "kernel.toml"
    path.write_text(text)
    with pytest.raises(pp.HarvestError, match=re.escape(message)):
        load(path)


def test_from_dict_needs_a_table():
    with pytest.raises(pp.HarvestError, match="expected a table of keys"):
        from_dict(["name"])


def _tiled_column(guard: str | None, guarded_when: str | None = None) -> CudaKernel:
    """Each thread sums a 3-point column window for 4 outputs one row apart: rows y..y+5 (6 distinct loads)."""
    return CudaKernel(
        name="column window",
        arrays=(Array("a", "float", (1030, 256)), Array("b", "float", (1024, 256))),
        threads=(256, 256),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "(blockIdx.y * blockDim.y + threadIdx.y) * 4 + t"},
        loops={"t": (0, 4)},
        loads=("a[y][x]", "a[y + 1][x]", "a[y + 2][x]"),
        stores=("b[y][x]",),
        guard=guard,
        guarded_when=guarded_when,
    )


def _loads_per_thread(kernel, block):
    from pystencils_perf.estimate.addresses import compile_kernel

    return sum(i.kind.value == "load" for i in compile_kernel(kernel.model(), block).instructions)


def test_loads_under_their_own_guards_are_not_merged():
    """nvcc loads a value that two iterations share once only where both run under one condition."""
    assert _loads_per_thread(_tiled_column(None), (32, 4, 1)) == 6  # a per-thread guard: shared rows merge
    assert _loads_per_thread(_tiled_column("y < 1024 && x < 256"), (32, 4, 1)) == 12  # each iteration its own if
    # the guard compiled only where the block does not divide 256 (Kernel Tuner's #if): 32 does, 48 does not
    conditional = _tiled_column("y < 1024 && x < 256", guarded_when="256 % blockDim.x != 0")
    assert _loads_per_thread(conditional, (32, 4, 1)) == 6
    assert _loads_per_thread(conditional, (48, 4, 1)) == 12


def test_guarded_when_names_what_it_may_not_depend_on():
    with pytest.raises(pp.HarvestError, match=r"guarded_when.*blockDim and constants only, not on tid.x"):
        _tiled_column("y < 1024", guarded_when="threadIdx.x % 2 != 0").model()
    with pytest.raises(pp.HarvestError, match="guarded_when.*is no condition"):
        _tiled_column("y < 1024", guarded_when="blockDim.x % 2").model()


@pytest.mark.skipif(compiler_for("8.0") is None, reason="needs nvcc or the NVRTC wheels")
def test_source_is_compiled_for_registers(tmp_path):
    """A described kernel with its source gets the registers ptxas allocates, with the defines applied."""
    source = tmp_path / "scale.cu"
    source.write_text(
        'extern "C" __global__ void scale(float *b, const float *a) {\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float s = 0;\n"
        "  #pragma unroll\n  for (int k = 0; k < TAPS; k++) s += a[i + k] * (k + 1);\n  b[i] = s;\n}\n"
    )
    kernel = CudaKernel(
        name="scale",
        arrays=(Array("a", "float", (4096 + 64,)), Array("b", "float", (4096,))),
        threads=(4096,),
        loads=tuple(f"a[blockIdx.x * blockDim.x + threadIdx.x + {k}]" for k in range(4)),
        stores=("b[blockIdx.x * blockDim.x + threadIdx.x]",),
        source=str(source),
        defines={"TAPS": 4},
    )
    ranking = pp.rank(kernel, "A100", blocks=[(128, 1, 1)], folds=[(1, 1, 1)])
    assert "registers per fold 1x1x1:" in ranking.resources_note and "sm_80" in ranking.resources_note
    assert ranking.best.metrics.registers_per_thread == ranking.resources[(1, 1, 1)].registers_per_thread
    with pytest.raises(pp.HarvestError, match="source .*missing.cu' is not a file"):
        pp.rank(replace(kernel, source=str(tmp_path / "missing.cu")), "A100", blocks=[(128, 1, 1)], folds=[(1, 1, 1)])


def _live_values_kernel(tmp_path):
    """A source whose blocks wider than 256 threads keep 96 loaded values live at once, others two."""
    source = tmp_path / "live.cu"
    source.write_text(
        "#define LIVE (block_size_x > 256 ? 96 : 2)\n"
        'extern "C" __global__ void live(float *b, const float *a) {\n'
        "  int i = blockIdx.x * block_size_x + threadIdx.x;\n  float v[LIVE];\n"
        "  #pragma unroll\n  for (int k = 0; k < LIVE; k++) v[k] = __ldg(&a[i + k * 4096]);\n  float s = 0;\n"
        "  #pragma unroll\n  for (int k = 0; k < LIVE; k++) s = s * v[k] + v[LIVE - 1 - k];\n  b[i] = s;\n}\n"
    )
    n = 4096
    return CudaKernel(
        name="live",
        arrays=(Array("a", "float", (97 * n,)), Array("b", "float", (n,))),
        threads=(n,),
        loads=tuple(f"a[blockIdx.x * blockDim.x + threadIdx.x + {k * n}]" for k in range(96)),
        stores=("b[blockIdx.x * blockDim.x + threadIdx.x]",),
        source=str(source),
        block_size_names=("block_size_x",),
    )


@pytest.mark.skipif(compiler_for("8.0") is None, reason="needs nvcc or the NVRTC wheels")
def test_a_source_with_block_size_macros_is_compiled_per_launch(tmp_path):
    """Kernel Tuner's kernels take the block size as macros: each block size is its own code with its own
    registers, which set that launch's occupancy, and a block whose code cannot run is rejected."""
    kernel = _live_values_kernel(tmp_path)  # about 100 registers in blocks wider than 256 threads
    ranking = pp.rank(kernel, "A100", blocks=[(128, 1, 1), (512, 1, 1), (1024, 1, 1)], folds=[(1, 1, 1)])
    registers = {launch.block: r.registers_per_thread for launch, r in ranking.launch_resources.items()}
    assert registers[(512, 1, 1)] > 64 >= 2 * registers[(128, 1, 1)]
    by_block = {c.launch.block: c.metrics for c in ranking.candidates}
    assert by_block[(512, 1, 1)].registers_per_thread == registers[(512, 1, 1)]
    assert by_block[(512, 1, 1)].occupancy_limited_by == "registers" and by_block[(512, 1, 1)].blocks_per_sm == 1
    assert by_block[(128, 1, 1)].blocks_per_sm == 16  # threads and blocks limit it, not its few registers
    assert [reason for launch, reason in ranking.rejected] == [
        f"occupancy 0: {registers[(512, 1, 1)]} registers x 32 warps ({-(-registers[(512, 1, 1)] * 32 // 256) * 256} "
        "per warp, allocated in units of 256, spread over 4 register files) exceed 65536 registers per SM"
    ]
    assert "registers per launch (its block size compiled in)" in ranking.resources_note
    with pytest.raises(pp.HarvestError, match="block_size_names .* but the description gives no source"):
        pp.rank(replace(kernel, source=None), "A100", blocks=[(128, 1, 1)], folds=[(1, 1, 1)])


@pytest.mark.skipif(hip_compiler.compiler_for("gfx906") is None, reason="needs a hipcc that builds gfx906")
def test_a_cuda_source_is_compiled_as_hip_for_an_amd_gpu(tmp_path):
    """On an AMD GPU the same CUDA source is compiled by hipcc for the device's architecture (an MI50's gfx906):
    hipcc caps a kernel without launch bounds at the VGPRs of 1024-thread blocks (64 on gfx906), so the block
    whose code keeps 96 values live spills, which the ranking counts."""
    kernel = _live_values_kernel(tmp_path)
    ranking = pp.rank(kernel, "MI50", blocks=[(128, 1, 1), (512, 1, 1)], folds=[(1, 1, 1)])
    used = {launch.block: r for launch, r in ranking.launch_resources.items()}
    assert {r.arch for r in used.values()} == {"gfx906"} and "hipcc" in ranking.resources_note
    assert used[(128, 1, 1)].spilled is False and used[(512, 1, 1)].spilled is True
    assert used[(512, 1, 1)].registers_per_thread > 2 * used[(128, 1, 1)].registers_per_thread
    by_block = {c.launch.block: c.metrics for c in ranking.candidates}
    assert by_block[(512, 1, 1)].registers_per_thread == used[(512, 1, 1)].registers_per_thread
    cuda_only = tmp_path / "half.cu"  # CUDA's own header, which HIP does not have
    cuda_only.write_text("#include <cuda_fp16.h>\n" + Path(kernel.source).read_text())
    with pytest.raises(pp.PerfError, match=r"could not compile kernel 'live' for gfx906: .*cuda_fp16.h.*HIP port\)$"):
        pp.rank(replace(kernel, source=str(cuda_only)), "MI50", blocks=[(128, 1, 1)])
    with pytest.raises(pp.PerfError, match=r"^the assembly hipcc wrote has no kernel 'other'$"):  # no port needed
        pp.rank(replace(kernel, function="other"), "MI50", blocks=[(128, 1, 1)])


def test_without_a_hipcc_an_amd_ranking_says_occupancy_is_assumed(tmp_path, monkeypatch):
    monkeypatch.setattr(hip_compiler, "available_compilers", lambda: ())
    ranking = pp.rank(_live_values_kernel(tmp_path), "MI50", blocks=[(128, 1, 1)], folds=[(1, 1, 1)])
    assert not ranking.launch_resources and not ranking.resources
    assert ranking.resources_note.startswith("occupancy assumed from threads per block: no plugin measured registers")
    assert "hipcc" in ranking.resources_note


def _tile_copy(shared_memory_bytes="(blockDim.y + 2) * (blockDim.x + 2) * 4"):
    """A block copies its tile and a one-point halo (rows and columns 0 .. blockDim + 1 from the block's
    corner) into shared memory, then stores one point per thread: a 3x3 box filter's global accesses."""
    n = 256
    return CudaKernel(
        name="box3 shared",
        arrays=(Array("a", "float", (n + 2, n + 2)), Array("b", "float", (n, n))),
        threads=(n, n),
        indices={"row": "threadIdx.y + r * blockDim.y", "col": "threadIdx.x + c * blockDim.x"},
        load_loops={"r": (0, 3), "c": (0, 3)},  # ceil((blockDim + 2) / blockDim) <= 3 for blocks of 1 and more
        load_guard="row < blockDim.y + 2 && col < blockDim.x + 2",
        loads=("a[blockIdx.y * blockDim.y + row][blockIdx.x * blockDim.x + col]",),
        stores=("b[blockIdx.y * blockDim.y + threadIdx.y][blockIdx.x * blockDim.x + threadIdx.x]",),
        shared_memory_bytes=shared_memory_bytes,
    )


def _sectors_of_box(block, bid, width=258, sector_bytes=32):
    """Brute force: the sectors of the (by + 2) x (bx + 2) floats a block copies."""
    bx, by = block[:2]
    return len(
        {
            ((bid[1] * by + r) * width + bid[0] * bx + c) * 4 // sector_bytes
            for r in range(by + 2)
            for c in range(bx + 2)
        }
    )


def test_load_loops_copy_a_tile_once_and_are_no_updates():
    from pystencils_perf.estimate.addresses import compile_kernel
    from pystencils_perf.estimate.plugin import get_backend
    from pystencils_perf.estimate.volumes import estimate_volumes, representative_blocks

    model = _tile_copy().model()
    assert model.lattice_updates == 256 * 256  # the copy's iterations are not updates
    compiled = compile_kernel(model, (32, 4, 1))
    loads = [i for i in compiled.instructions if i.kind.value == "load"]
    stores = [i for i in compiled.instructions if i.kind.value == "store"]
    # copy rows 0..5 in two passes of 4 (the third pass runs on no thread), columns 0..33 in two of 32
    assert len(loads) == 4 and len(stores) == 1 and len(compiled.points) == 1
    for block in ((32, 4, 1), (16, 16, 1), (64, 2, 1)):
        metrics = estimate_volumes(model, block, pp.get_device("A100"), get_backend("enum"))
        bids = representative_blocks((256 // block[0], 256 // block[1], 1))  # the blocks the estimate averages
        expected = sum(_sectors_of_box(block, bid) for bid in bids) * 32 / len(bids) / (block[0] * block[1])
        assert metrics.l1_compulsory_bytes_per_lup == pytest.approx(expected), block


def test_shared_memory_that_grows_with_the_block_sets_occupancy():
    from pystencils_perf.estimate.volumes import occupancy

    model = _tile_copy().model()
    assert model.shared_memory_for((32, 4, 1)) == 6 * 34 * 4
    a100 = pp.get_device("A100")
    assert occupancy(model, 1024, a100, (32, 32, 1)).blocks_per_sm == 2  # threads limit: 1024 of 2048
    big = _tile_copy("(blockDim.y + 2) * (blockDim.x + 2) * 4 * 40").model()  # 32640 B per 32x4 block
    # 164 KiB per SM over 32640 B and the 1 KiB the runtime reserves per block (compute capability 8.0)
    assert occupancy(big, 128, a100, (32, 4, 1)).blocks_per_sm == 167936 // (32640 + 1024) == 4
    assert occupancy(big, 128, a100, (32, 4, 1)).limited_by == "shared memory"
    with pytest.raises(
        pp.HarvestError, match="shared_memory_bytes 'threadIdx.x \\* 4' is not an expression of blockDim"
    ):
        _tile_copy("threadIdx.x * 4").model()
    with pytest.raises(pp.HarvestError, match="shared_memory_bytes = -4 is not a non-negative integer"):
        _tile_copy(-4).model()


def test_shared_memory_may_take_remainders_of_the_block_as_a_padding_does():
    # Kernel Tuner's convolution pads each shared row where the block's width is no multiple of 32
    padded = _tile_copy(
        "(blockDim.y + 2) * (blockDim.x + 2 + (32 - (blockDim.x + 2) % 32) % 32 * (blockDim.x % 32 / 16)) * 4"
    )
    model = padded.model()
    assert model.shared_memory_for((16, 4, 1)) == 6 * 32 * 4  # 18 columns padded to 32
    assert model.shared_memory_for((48, 4, 1)) == 6 * 64 * 4  # 50 columns padded to 64
    assert model.shared_memory_for((32, 4, 1)) == 6 * 34 * 4  # a multiple of 32: no padding


def test_load_loops_are_refused_where_they_would_change_updates_or_lose_bounds():
    with pytest.raises(pp.HarvestError, match="guarded_when would compile the load loops' bounds in load_guard out"):
        replace(_tile_copy(), guarded_when="256 % blockDim.x != 0").model()
    with pytest.raises(pp.HarvestError, match="guard 'r < 1' depends on a load loop"):
        replace(_tile_copy(), guard="r < 1").model()
    with pytest.raises(pp.HarvestError, match="'r' is in both loops and load_loops"):
        replace(_tile_copy(), loops={"r": (0, 2)}).model()


def test_a_toml_spec_with_a_kernel_table_ranks_from_the_command_line(tmp_path, capsys):
    """`[kernel]` makes a TOML file a SPEC (the `perf_load_spec` hook), and so does a description alone (the plugin's
    examples, as `load` reads them); other TOML files are refused by name."""
    from pystencils_perf.cli import main
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    text = (EXAMPLES / "transpose.toml").read_text()
    body = text.replace("[constants]", "[kernel.constants]").replace("[indices]", "[kernel.indices]")
    spec = tmp_path / "transpose_spec.toml"
    spec.write_text("[kernel]\n" + body.replace("[[arrays]]", "[[kernel.arrays]]"))
    assert main(["rank", str(spec), "--device", "V100", "--head", "3"]) == 0
    assert "transpose" in capsys.readouterr().out
    assert main(["rank", str(EXAMPLES / "transpose.toml"), "--device", "V100", "--head", "3"]) == 0
    assert "transpose" in capsys.readouterr().out
    (tmp_path / "other.toml").write_text("name = 'transpose'\n[constants]\nn = 64\n")  # neither
    assert main(["rank", str(tmp_path / "other.toml"), "--device", "V100"]) == 2
    assert "is not Python, and no plugin reads it (a TOML SPEC needs a [kernel] table, or a description's threads" in (
        capsys.readouterr().err
    )
    spec.write_text("[kernel]\nname = 'k'\n[kernel_tuner]\nlattice_update = 1\n")
    with pytest.raises(pp.HarvestError, match=r"\[kernel_tuner\]: known keys are lattice_updates, constants"):
        load_tunable_spec(spec)
    spec.write_text("[kernel]\nname = 'k'\n[kernel_tuner]\nconstants = { n = 'size' }\nlattice_updates = 1\n")
    with pytest.raises(pp.HarvestError, match="the data has no tunable parameter 'size'"):
        load_tunable_spec(spec).kernel_for({"block_size_x": 32})
    with pytest.raises(pp.HarvestError, match="tunable parameter 'size' = 1.5 is not an integer"):
        load_tunable_spec(spec).kernel_for({"size": 1.5})


def _shared_box(dtype="float", pitch=None, filter_size=3):
    """`_tile_copy` with its shared tile described: the copy's stores, and a box filter's loads of it."""
    return replace(
        _tile_copy(shared_memory_bytes=0),
        arrays=(Array("a", dtype, (258, 258)), Array("b", dtype, (256, 256))),
        shared_arrays=(SharedArray("tile", dtype, ("blockDim.y + 2", "blockDim.x + 2"), pitch=pitch),),
        shared_stores=("tile[row][col]",),
        shared_loads=("tile[threadIdx.y + i][threadIdx.x + j]",),
        inner_loops={"i": (0, filter_size), "j": (0, filter_size)},
    )


def _busiest_bank_wavefronts(words_per_lane: list[list[int]], banks=32) -> int:
    """Brute force, lane by lane: a warp's wavefronts are the most distinct 4-B words one bank must deliver."""
    per_bank: dict[int, set] = {}
    for words in words_per_lane:
        for w in words:
            per_bank.setdefault(w % banks, set()).add(w)
    return max(len(ws) for ws in per_bank.values())


@pytest.mark.parametrize(
    "dtype, block, pitch",
    [("float", (32, 4, 1), None), ("float", (16, 8, 1), None), ("float", (48, 2, 1), None), ("double", (32, 2, 1), None),
     ("float", (16, 8, 1), "blockDim.x + 2 + (32 - (blockDim.x + 2) % 32) % 32")],
)  # fmt: skip
def test_shared_wavefronts_are_the_busiest_bank_per_warp(dtype, block, pitch):
    from pystencils_perf.estimate.shared import shared_requests

    model = _shared_box(dtype, pitch).model()
    element = 8 if dtype == "double" else 4
    bx, by, _ = block
    row = bx + 2 if pitch is None else bx + 2 + (32 - (bx + 2) % 32) % 32
    assert model.shared_memory_for(block) == (by + 2) * row * element  # sized by the arrays where not given
    got = shared_requests(model, block, [(1, 1, 0)], pp.get_device("A100"))
    lanes = [(t % bx, t // bx) for t in range(bx * by)]
    warps = [lanes[k : k + 32] for k in range(0, len(lanes), 32)]

    def words(r, c):
        first = (r * row + c) * element // 4
        return list(range(first, first + element // 4))

    loads = sum(
        _busiest_bank_wavefronts([words(y + i, x + j) for x, y in warp])
        for warp in warps
        for i in range(3)
        for j in range(3)
    )
    assert got.load_wavefronts_per_lup == pytest.approx(loads / (bx * by))
    assert got.load_requests_per_lup == pytest.approx(9 * len(warps) / (bx * by))
    stores = 0
    for r0 in range(0, by + 2, by):
        for c0 in range(0, bx + 2, bx):
            for warp in warps:
                active = [(x + c0, y + r0) for x, y in warp if y + r0 < by + 2 and x + c0 < bx + 2]
                stores += _busiest_bank_wavefronts([words(r, c) for c, r in active]) if active else 0
    assert got.store_wavefronts_per_lup == pytest.approx(stores / (bx * by))


def test_a_broadcast_is_one_wavefront_and_shared_values_are_loaded_once_per_thread():
    from pystencils_perf.estimate.shared import shared_requests

    # every lane of a row reads the same word: one wavefront per warp and load; a tile's rows overlap
    desc = replace(
        _shared_box(),
        loops={"yi": (0, 2)},
        stores=(
            "b[blockIdx.y * blockDim.y * 2 + threadIdx.y + yi * blockDim.y][blockIdx.x * blockDim.x + threadIdx.x]",
        ),
        guard="threadIdx.x < 1000",
        threads=(256, 128),
        shared_loads=("tile[threadIdx.y + yi + i][0]",),
        inner_loops={"i": (0, 3)},
    )
    model = desc.model()
    got = shared_requests(model, (32, 1, 1), [(0, 0, 0)], pp.get_device("A100"))
    # rows yi + i: 0..3, four distinct loads for two updates per thread, one wavefront each
    assert got.load_wavefronts_per_lup == pytest.approx(4 / (2 * 32))
    assert got.load_requests_per_lup == pytest.approx(4 / (2 * 32))


def test_the_compiled_codes_shared_loads_replace_the_described_ones():
    """Where a launch's compiled code was read (`ResourceUsage.shared_load_words_per_thread`), its warps issue that many
    shared loads, each with the bank conflicts of the described ones: a compiler that reloads every tap of the box
    filter's 9 distinct values twice issues 18, and the shared wavefronts, requests and issued instructions grow
    by that much; the copy's stores do not change."""
    from pystencils_perf.resources import ResourceUsage

    model = _shared_box().model()
    block, fold, dev = (32, 4, 1), (1, 1, 1), pp.get_device("A100")
    described = pp.rank(model, dev, blocks=[block], folds=[fold]).best.metrics
    usage = ResourceUsage("sm_80", 32, 0, 0, 0, "nvcc", shared_load_words_per_thread=18.0)
    compiled = pp.rank(
        replace(model, resources_by_launch=(((block, fold), usage),)), dev, blocks=[block], folds=[fold]
    ).best.metrics
    assert compiled.shared_load_wavefronts_per_lup == pytest.approx(2 * described.shared_load_wavefronts_per_lup)
    assert compiled.shared_load_requests_per_lup == pytest.approx(2 * described.shared_load_requests_per_lup)
    assert described.shared_load_requests_per_lup == pytest.approx(9 / 32)  # 9 loads per warp of 32 updates
    assert compiled.shared_store_wavefronts_per_lup == described.shared_store_wavefronts_per_lup
    grown = compiled.extras["warp_instructions_per_lup"] - described.extras["warp_instructions_per_lup"]
    assert grown == pytest.approx(described.shared_load_requests_per_lup)


def _row_copy(tile: int, unroll: int):
    """One row of `tile` points per thread and a 14-point halo, copied into shared memory by a loop whose trip count
    differs between threads: ``for (col = threadIdx.x; col < blockDim.x * tile + 14; col += blockDim.x)``."""
    return CudaKernel(
        name="row copy",
        arrays=(Array("a", "float", (4096 + 14,)), Array("b", "float", (4096,))),
        threads=(4096 // tile,),
        indices={"col": "threadIdx.x + c * blockDim.x"},
        load_loops={"c": (0, tile + 14)},  # ceil((blockDim.x * tile + 14) / blockDim.x) <= tile + 14
        load_loop_bounds={"c": f"col < blockDim.x * {tile} + 14"},
        runtime_unroll=unroll,
        load_guard="blockIdx.x * blockDim.x * " + str(tile) + " + col < 4110",
        loads=(f"a[blockIdx.x * blockDim.x * {tile} + col]",),
        stores=(f"b[blockIdx.x * blockDim.x * {tile} + threadIdx.x]",),
        shared_arrays=(SharedArray("row", "float", (f"blockDim.x * {tile} + 14",)),),
        shared_stores=("row[col]",),
    )


def _unrolled_copy_counts(block_x: int, tile: int, unroll: int) -> tuple[int, int, int]:
    """Brute force, warp by warp: the copy's store instructions and wavefronts where each thread runs the iterations
    its groups of `unroll` leave over first, one by one, then the groups, and a warp runs each of the rest and each
    group for the threads that have it, each thread at its own iteration; and the times a warp waits for its loads,
    once per iteration of the rest and once per group."""
    width, instructions, wavefronts, waits = block_x * tile + 14, 0, 0, 0
    for first in range(0, block_x, 32):
        trips = {tx: len(range(tx, width, block_x)) for tx in range(first, min(first + 32, block_x))}
        runs = [
            {tx: k for tx, t in trips.items() if t % unroll > k} for k in range(max(t % unroll for t in trips.values()))
        ]
        runs += [
            {tx: t % unroll + unroll * g + u for tx, t in trips.items() if t // unroll > g}
            for g in range(max(t // unroll for t in trips.values()))
            for u in range(unroll)
        ]
        for run in runs:
            instructions += 1
            wavefronts += _busiest_bank_wavefronts([[tx + block_x * c] for tx, c in run.items()])
        waits += max(t // unroll for t in trips.values()) + max(t % unroll for t in trips.values())
    return instructions, wavefronts, waits


@pytest.mark.parametrize("block_x, tile", [(32, 3), (32, 7), (64, 3), (48, 4), (32, 4), (96, 5)])
def test_a_copy_loop_unrolled_at_run_time_issues_each_code_path_for_its_own_threads(block_x, tile):
    """KTT's counters (validation/rtx2080ti_convolution/shared_wavefronts.md): a 32-wide block whose threads copy
    rows of 110 values makes 4 or 3 iterations per thread, and its warp issues 3 + 4 stores, not 4. A 48-wide block
    with 4-wide tiles copies rows of 206: threads 0-13 make 5 iterations, the others 4, and the group's stores of
    the first run one column further on than the others': KTT's counters show 196.9 shared-store wavefronts per
    block of 48x2 threads with 4x2 tiles, leftovers first counts 198 and leftovers last 162."""
    from pystencils_perf.estimate.shared import shared_requests
    from pystencils_perf.models.throughput import request_counts

    a100 = pp.get_device("A100")
    block = (block_x, 1, 1)
    for unroll in (4, 2, 1):
        model = _row_copy(tile, unroll).model()
        got = shared_requests(model, block, [(3, 0, 0)], a100)
        instructions, wavefronts, waits = _unrolled_copy_counts(block_x, tile, unroll)
        assert got.store_requests_per_lup * block_x == pytest.approx(instructions), unroll
        assert got.store_wavefronts_per_lup * block_x == pytest.approx(wavefronts), unroll
        # the global loads: one request each, a group's together and the rest one by one
        counts = request_counts(model, pp.LaunchConfig(block), a100, 4)
        assert counts["load_requests_per_lup"] * block_x == pytest.approx(instructions), unroll
        if unroll > 1:
            assert counts["coded_load_rounds_per_lup"] * block_x == pytest.approx(waits), unroll
        else:  # every iteration its own: the model's estimate of the loads in flight
            assert "coded_load_rounds_per_lup" not in counts
    assert _unrolled_copy_counts(32, 3, 4) == (7, 7, 4) and _unrolled_copy_counts(32, 3, 1)[:2] == (4, 4)


@pytest.mark.parametrize("block, classes", [((48, 2, 1), 2), ((16, 8, 1), 2), ((2, 32, 1), 1)])
def test_iterations_no_thread_runs_are_left_out_without_changing_the_code(monkeypatch, block, classes):
    """The compiler drops the classes of lanes that no thread of the block is in before it evaluates any access
    (`addresses._iterations`); compiled without that step, the same instructions, joined alike, come out. Rows of
    4 x 48 + 14 values: 5 or 4 columns per thread (two classes); of 4 x 2 + 14: 11 for both threads (one)."""
    from pystencils_perf.estimate import addresses

    desc = _row_copy(4, 4)
    desc = replace(
        desc,
        threads=(4096 // 4, 8),
        indices={**desc.indices, "row": "threadIdx.y + r * blockDim.y"},
        load_loops={"r": (0, 22), **desc.load_loops},
        load_guard=f"row < blockDim.y + 14 && {desc.load_guard}",
        shared_arrays=(SharedArray("tile", "float", ("blockDim.y + 14", "blockDim.x * 4 + 14")),),
        shared_stores=("tile[row][col]",),
    )
    model = desc.model().shared_view()
    pruned = addresses._compile.__wrapped__(addresses._code_of(model), block)
    monkeypatch.setattr(addresses, "_common_thread_constraints", lambda model, relevant: ())
    whole = addresses._compile.__wrapped__(addresses._code_of(model), block)
    assert bool(pruned.joined) == (classes > 1) and len(pruned.instructions) == len(whole.instructions)
    assert set(pruned.instructions) == set(whole.instructions)
    as_set = [{whole.instructions[i] for i in g} for g in whole.joined]
    assert sorted(map(sorted, ({pruned.instructions[i] for i in g} for g in pruned.joined)), key=str) == sorted(
        map(sorted, as_set), key=str
    )


def test_load_loop_bounds_are_checked():
    with pytest.raises(pp.HarvestError, match="load_loop_bounds names 'k', which is no load loop"):
        replace(_row_copy(3, 4), load_loop_bounds={"k": "col < 10"}).model()
    with pytest.raises(pp.HarvestError, match="load_loop_bounds 'c' 'col == 10' is not one inequality"):
        replace(_row_copy(3, 4), load_loop_bounds={"c": "col == 10"}).model()
    with pytest.raises(pp.HarvestError, match="'col > 10': it must fail from some iteration on"):
        replace(_row_copy(3, 4), load_loop_bounds={"c": "col > 10"}).model()
    with pytest.raises(pp.HarvestError, match="runtime_unroll = 0 is not a positive integer"):
        replace(_row_copy(3, 4), runtime_unroll=0).model()
    with pytest.raises(pp.HarvestError, match="guarded_when would compile load_loop_bounds out"):
        replace(_row_copy(3, 4), load_guard=None, guarded_when="blockDim.x % 32 != 0").model()


def test_only_the_accesses_of_a_bounded_loop_take_its_paths():
    """A load outside the copy loop runs once per thread, whatever the copy's paths: it is not repeated over them."""
    desc = _row_copy(3, 4)
    model = replace(
        desc, load_guard="threadIdx.x < 1024", loads=(*desc.loads, "b[blockIdx.x * blockDim.x + threadIdx.x]")
    ).model()
    outside = [a for a in model.accesses if a.kind.value == "load" and a.field == "b"]
    copy = [a for a in model.accesses if a.kind.value == "load" and a.field == "a"]
    assert len(outside) == 1 and outside[0].loads_in_flight == 0
    assert sorted(a.loads_in_flight for a in copy) == [1, 4]
    # folding keeps what the code says of its loads (the copy into global memory: shared arrays are never folded)
    unshared = replace(desc, shared_arrays=(), shared_stores=(), load_guard="threadIdx.x < 1024").model()
    assert sorted(a.loads_in_flight for a in unshared.folded((2, 1, 1)).accesses if a.field == "a") == [1, 4]
    with pytest.raises(
        pp.HarvestError, match="'row copy' cannot be folded \\(2, 1, 1\\): a kernel with shared arrays .* it would need"
    ):
        model.folded((2, 1, 1))


def test_shared_memory_descriptions_are_checked():
    with pytest.raises(pp.HarvestError, match="shared load 'tile\\[blockIdx.x\\]\\[0\\]': a block's shared array"):
        replace(_shared_box(), shared_loads=("tile[blockIdx.x][0]",)).model()
    with pytest.raises(pp.HarvestError, match="unknown shared array 'tyle'"):
        replace(_shared_box(), shared_loads=("tyle[0][0]",)).model()
    with pytest.raises(pp.HarvestError, match="shared array 'tile': unknown dtype 'flaot'"):
        replace(_shared_box(), shared_arrays=(SharedArray("tile", "flaot", (4, 4)),)).model()
    with pytest.raises(pp.HarvestError, match="'i' is in both load_loops and inner_loops"):
        replace(_shared_box(), load_loops={"i": (0, 3), "c": (0, 3)}).model()
    with pytest.raises(pp.HarvestError, match="depends on an inner loop"):
        replace(_shared_box(), loads=("a[row + i][col]",)).model()
    table = {
        "name": "t", "arrays": [{"name": "a", "dtype": "float", "shape": [8]}], "threads": 8, "stores": ["a[x]"],
        "indices": {"x": "threadIdx.x"}, "shared_arrays": [{"name": "s", "dtype": "float", "shape": [8], "pich": 9}],
    }  # fmt: skip
    with pytest.raises(pp.HarvestError, match="shared_arrays\\[0\\]: unknown key 'pich'"):
        from_dict(table)
    model = from_dict({**table, "shared_arrays": [{"name": "s", "dtype": "float", "shape": ["blockDim.x"]}],
                       "shared_loads": ["s[threadIdx.x]"]}).model()  # fmt: skip
    assert "shared array s" in model.summary() and "load  s[tid.x]" in model.summary()


def test_work_registers_and_shared_indices_are_checked():
    """A negative flop count would price a kernel faster the more it computes; a register count that is no positive
    integer divided by zero deep in the occupancy; one index into a 2-D shared array is a row in CUDA, no element."""
    for flops in (-3.0, float("nan"), float("inf"), "450", True):
        with pytest.raises(pp.HarvestError, match=f"flops_per_lup = {re.escape(repr(flops))} is not a number"):
            replace(_shared_box(), flops_per_lup=flops).model()
    for registers in (0, -3, 2.5, "32", True):
        with pytest.raises(pp.HarvestError, match=f"registers_per_thread = {re.escape(repr(registers))} is not a pos"):
            replace(_shared_box(), registers_per_thread=registers).model()
    assert replace(_shared_box(), flops_per_lup=18, registers_per_thread=32).model().registers_per_thread == 32
    with pytest.raises(pp.HarvestError, match="shared load 'tile\\[threadIdx.y\\]': 1 index for the 2 dimensions"):
        replace(_shared_box(), shared_loads=("tile[threadIdx.y]",)).model()


def test_a_shared_array_is_declared_per_block():
    """Its extents and padded pitch in numbers for each block; an extent that is no positive integer, or a pitch
    shorter than the row, describes no code: an error that names the array and the block."""
    padded = "blockDim.x + 2 + (32 - (blockDim.x + 2) % 32) % 32"
    (tile,) = _shared_box(pitch=padded).model().shared_arrays_for((16, 8, 1))
    assert (tile.shape, tile.strides) == ((10, 18), (32, 1))
    short = _shared_box(pitch="blockDim.x").model()
    with pytest.raises(pp.HarvestError, match="'tile' in blocks of 16x8x1 threads: a step of 16 elements along axis 0"):
        short.shared_arrays_for((16, 8, 1))
    with pytest.raises(pp.HarvestError, match="a step of 16 elements along axis 0 \\(the pitch\\) is shorter than"):
        pp.rank(_shared_box(pitch="blockDim.x"), "A100", blocks=[(16, 8, 1)], folds=[(1, 1, 1)])
    empty = replace(_shared_box(), shared_arrays=(SharedArray("tile", "float", ("blockDim.y - 8", "blockDim.x")),))
    with pytest.raises(pp.HarvestError, match="its extent bdim.y - 8 along axis 0 is 0, not a positive integer"):
        pp.rank(empty, "A100", blocks=[(32, 16, 1), (32, 8, 1)], folds=[(1, 1, 1)])


def test_a_launch_whose_shared_loads_leave_the_array_is_rejected():
    """The box filter reads rows up to threadIdx.y + 2 of a tile of blockDim.y + 2 rows; a load 3 rows further on
    reads past the tile's last row (row 12 of 10 in blocks of 16x8): no launch runs it."""
    shifted = replace(_shared_box(), shared_loads=("tile[threadIdx.y + i + 3][threadIdx.x + j]",))
    with pytest.raises(
        pp.PerfError,
        match=r"no launch candidate .* \(16x8x1 f1x1x1: the shared load 'tile\[threadIdx.y \+ i \+ 3\]\[threadIdx.x "
        r"\+ j\]': its index loop.i \+ tid.y \+ 3 along axis 0 reaches 12 in blocks of 16x8x1, outside the 10 elements "
        r"of shared array 'tile' there\)",
    ):
        pp.rank(shifted, "A100", blocks=[(16, 8, 1)], folds=[(1, 1, 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfWarning)
        assert len(pp.rank(_shared_box(), "A100", blocks=[(16, 8, 1)], folds=[(1, 1, 1)]).candidates) == 1


def test_a_guarded_shared_store_outside_the_array_warns():
    """The copy's stores run under its guard, which a description may state more loosely than the code: no launch is
    rejected for them, but one that stores past the whole tile in the first ranked launch's blocks warns."""
    shifted = replace(_shared_box(), shared_stores=("tile[row + 3][col]",))
    with pytest.warns(
        PerfWarning,
        match=r"kernel '.*': the store tile\[.*\] reaches tile\[10, 15\], outside shared array 'tile' of shape "
        r"\(10, 18\): it writes memory that is not the array's",
    ):
        assert len(pp.rank(shifted, "A100", blocks=[(16, 8, 1)], folds=[(1, 1, 1)]).candidates) == 1


@pytest.mark.parametrize("pad", [0, 1])
def test_the_shared_transpose_runs_in_square_blocks_only(pad):
    """examples/transpose_shared.toml reads its tile's columns as rows (``tile[threadIdx.x][threadIdx.y]``): in a
    block wider or taller than square the index leaves the tile's axis, though not its bytes (a 64x16 tile read at
    [15][63]), and that launch is rejected, naming the load and the index."""
    ranking = pp.rank(replace(load(EXAMPLES / "transpose_shared.toml"), constants={"n": 4096, "pad": pad}), "A100")
    assert ranking.candidates and all(c.launch.block[0] == c.launch.block[1] for c in ranking.candidates)
    assert all(c.launch.fold == (1, 1, 1) for c in ranking.candidates)  # the code's tile is one point per thread
    assert (
        "a kernel with shared arrays gives its threads their points itself"
        in (dict(ranking.rejected)[pp.LaunchConfig((32, 32, 1), (1, 2, 1))])
    )
    assert dict(ranking.rejected)[pp.LaunchConfig((16, 64, 1))] == (
        "the shared load 'tile[threadIdx.x][threadIdx.y]': its index tid.y along axis 1 reaches 63 in blocks of "
        "16x64x1, outside the 16 elements of shared array 'tile' there"
    )


def test_static_shared_arrays_over_48_kib_are_rejected_dynamic_ones_are_not():
    """The H200's one shared-memory convolution that nvcc did not compile had a static tile over 48 KiB."""
    big = ("blockDim.y * 40", "blockDim.x * 40")  # 1600 floats per thread: 51200 B for a block of 8
    static = replace(_shared_box(), shared_arrays=(SharedArray("tile", "float", big),))
    ranking = pp.rank(static, "A100", blocks=[(4, 1, 1), (8, 1, 1)], folds=[(1, 1, 1)])
    assert [c.launch.block for c in ranking.candidates] == [(4, 1, 1)]
    ((launch, why),) = ranking.rejected
    assert launch.block == (8, 1, 1) and "51200 B of statically sized shared arrays exceed the 49152 B" in why
    dynamic = replace(static, shared_arrays=(SharedArray("tile", "float", big, static=False),))
    assert len(pp.rank(dynamic, "A100", blocks=[(4, 1, 1), (8, 1, 1)], folds=[(1, 1, 1)]).candidates) == 2


@pytest.mark.parametrize("pad", [0, 1])
def test_the_shared_transpose_example_conflicts_unless_padded(pad):
    """examples/transpose_shared.toml: a warp reads a column of its 32-wide tile, one bank 32 times over unless a
    padding column spreads it; a row pitch that is blockDim.x itself (pad = 0) is a number per block too."""
    import tomllib

    from pystencils_perf.estimate.shared import shared_requests

    data = tomllib.loads((EXAMPLES / "transpose_shared.toml").read_text())
    data["constants"]["pad"] = pad
    model = from_dict(data).model()
    got = shared_requests(model, (32, 32, 1), [(3, 3, 0)], pp.get_device("A100"))
    assert got.load_wavefronts_per_lup == pytest.approx((32 if pad == 0 else 1) / 32)
    assert got.store_wavefronts_per_lup == pytest.approx(1 / 32)
    assert model.shared_memory_for((32, 32, 1)) == 32 * (32 + pad) * 4
    # a one-dimensional byte array of blockDim.x elements: its bytes are blockDim.x itself
    tiny = replace(_shared_box(), shared_arrays=(SharedArray("tile", "char", ("blockDim.x",)),), shared_loads=(),
                   shared_stores=("tile[threadIdx.x]",))  # fmt: skip
    assert tiny.model().shared_memory_for((64, 1, 1)) == 64
