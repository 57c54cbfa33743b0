"""HIP kernels for AMD GPUs: the device's vendor picks the pystencils target, its runtime's limits, its compiler."""

import math
import re
from dataclasses import replace

import pytest

import pystencils_perf as pp
from pystencils_perf.adapters import hip_compiler
from pystencils_perf.adapters.pystencils.folding import FoldedLaunchConfiguration, create_folded_kernel
from pystencils_perf.adapters.pystencils.targets import gpu_config
from pystencils_perf.catalog import star_3d_assignments, star_3d_recipe

DOMAIN = (64, 32, 16)
BLOCKS = [(64, 4, 2), (32, 8, 2), (64, 2, 4)]
FOLDS = [(1, 1, 1), (1, 2, 1)]
#: what CUDA has and HIP has not: a HIP kernel naming any of them would not compile for an AMD GPU
CUDA_ONLY = ("__ldg", "__shfl_sync", "__syncwarp", "asm(", "cuda_fp16", "cuda/std")


@pytest.fixture(scope="module")
def star():
    return star_3d_assignments(1, DOMAIN)


@pytest.fixture(scope="module")
def mi210():
    return pp.get_device("MI210")


@pytest.fixture(scope="module")
def hip_kernel(star):
    """The 7-point star chosen for one MI250X GCD (what a process sees) by create_kernel."""
    return pp.create_kernel(star, device="MI250X", blocks=BLOCKS, folds=FOLDS)


def launched(kernel):
    """(block, fold, grid) of a generated kernel's launch configuration."""
    config = kernel.get_launch_configuration()
    fold = config.fold if isinstance(config, FoldedLaunchConfiguration) else (1, 1, 1)
    block, grid = config.evaluate()
    return block, fold, grid


def assert_hip_source(kernel, block):
    code = kernel.get_c_code()
    assert code.startswith(f"__global__ __launch_bounds__({math.prod(block)}) void {kernel.name} (")
    assert '"pystencils_runtime/hip.h"' in kernel.required_headers
    assert not [word for word in CUDA_ONLY if word in code]
    assert all("cuda" not in header for header in kernel.required_headers)


def test_create_kernel_for_an_amd_gpu_is_hip_with_the_chosen_block(hip_kernel):
    import pystencils as ps

    choice = hip_kernel.metadata["pystencils_perf"]
    assert hip_kernel.target == ps.Target.HIP and choice.device.name == "MI250X-GCD"
    assert choice.chosen == pp.select(choice.ranking)
    assert len(choice.ranking.candidates) == len(BLOCKS) * len(FOLDS)
    block, fold, grid = launched(hip_kernel)
    assert (block, fold) == (choice.launch.block, choice.launch.fold)
    assert grid == tuple(-(-n // (b * f)) for n, b, f in zip(DOMAIN, block, fold))
    assert_hip_source(hip_kernel, block)


def test_a_folded_hip_kernel_steps_over_its_fold(star, mi210):
    """Fold (1, 2, 1): each thread updates rows y and y + 1, so the y counter steps by 2 threads' rows."""
    kernel = create_folded_kernel(star, fold=(1, 2, 1), block=(64, 4, 2), device=mi210)
    code = kernel.get_c_code()
    assert_hip_source(kernel, (64, 4, 2))
    assert "ctr_1 = 1LL + 2LL * ((int64_t) blockIdx.y * (int64_t) blockDim.y + (int64_t) threadIdx.y)" in code
    assert re.search(r"_data_dst\[ctr_0 \* \d+LL \+ \(ctr_1 \+ 1LL\) \* \d+LL \+ ctr_2\] =", code)  # the second row
    assert launched(kernel) == ((64, 4, 2), (1, 2, 1), (1, 4, 8))
    cuda = create_folded_kernel(star, fold=(1, 2, 1), block=(64, 4, 2))
    hip_model, cuda_model = pp.harvest(kernel), pp.harvest(cuda)
    assert (hip_model.language, cuda_model.language) == ("HIP", "CUDA")  # what `rank` checks against the device
    assert replace(hip_model, language="") == replace(cuda_model, language="")  # the same accesses otherwise


def test_the_target_follows_the_vendor(star):
    import pystencils as ps

    assert gpu_config(None, pp.get_device("MI210")).target == ps.Target.HIP
    assert gpu_config(None, pp.get_device("H100")).target == ps.Target.CUDA
    assert gpu_config(ps.CreateKernelConfig(target=ps.Target.GPU), pp.get_device("MI210")).target == ps.Target.HIP
    assert gpu_config(None, pp.get_device("MI210")).gpu.warp_size == 64  # a CDNA wavefront
    hip = ps.CreateKernelConfig(target=ps.Target.HIP)
    assert gpu_config(hip).target == ps.Target.HIP  # without a device, the configuration's GPU target stays
    cuda = pp.create_kernel(star, device="H100", blocks=BLOCKS, folds=FOLDS, nvcc=False)
    assert cuda.target == ps.Target.CUDA and "__launch_bounds__" not in cuda.get_c_code()


def test_a_catalog_recipe_is_generated_for_the_device_it_is_ranked_for():
    """The recipe names no target, so each fold `perf_resources` compiles is HIP for the MI210, CUDA for the H100."""
    import pystencils as ps

    recipe = star_3d_recipe(1, (16, 8, 8))
    assert recipe.config.target is None
    for device, target in (("MI210", ps.Target.HIP), ("H100", ps.Target.CUDA)):
        variant = create_folded_kernel(recipe.assignments, recipe.config, fold=(1, 1, 2), device=pp.get_device(device))
        assert variant.target == target


@pytest.mark.parametrize(("target", "device", "message"), [
    ("HIP", "H100", "the CreateKernelConfig targets Target.HIP, but H100-SXM5-80GB is an NVIDIA GPU, which runs "
                    "Target.CUDA kernels: leave the target out or set target=Target.CUDA"),
    ("CUDA", "MI210", "the CreateKernelConfig targets Target.CUDA, but MI210 is an AMD GPU, which runs Target.HIP "
                      "kernels: leave the target out or set target=Target.HIP"),
])  # fmt: skip
def test_the_other_vendors_target_is_refused_in_one_line(star, target, device, message):
    import pystencils as ps

    config = ps.CreateKernelConfig(target=getattr(ps.Target, target))
    with pytest.raises(pp.ConfigurationError) as caught:
        pp.create_kernel(star, config, device=device, nvcc=False)
    assert str(caught.value) == message


def test_create_lb_kernel_for_an_amd_gpu_is_hip(hip_d3q19_kernel):
    import pystencils as ps

    choice = hip_d3q19_kernel.metadata["pystencils_perf"]
    assert hip_d3q19_kernel.target == ps.Target.HIP and choice.device.name == "MI250X-GCD"
    block, fold, _ = launched(hip_d3q19_kernel)
    assert (block, fold) == (choice.launch.block, choice.launch.fold)
    assert_hip_source(hip_d3q19_kernel, block)
    assert len(pp.harvest(hip_d3q19_kernel).stores) == 19 * math.prod(fold)


@pytest.mark.skipif(
    hip_compiler.compiler_for("gfx90a") is not None, reason="hipcc is installed: registers are measured"
)
def test_without_hipcc_registers_are_not_measured_and_the_ranking_says_so(hip_kernel, hip_d3q19_kernel):
    for kernel in (hip_kernel, hip_d3q19_kernel):
        choice = kernel.metadata["pystencils_perf"]
        assert choice.resources == {}
        assert choice.summary().endswith("registers not measured (no hipcc)")
        assert choice.ranking.resources_note.startswith(
            "occupancy assumed from threads per block: no plugin measured registers (no hipcc (ROCm's HIP compiler)"
        )


def test_the_compile_path_is_skipped_without_hipcc(star, monkeypatch):
    monkeypatch.setattr(hip_compiler, "available_compilers", lambda: ())
    assert hip_compiler.compiler_for("gfx90a") is None
    ranking = pp.rank(star, "MI210", blocks=BLOCKS[:1], folds=FOLDS[:1])
    assert ranking.resources == {} and "no hipcc" in ranking.resources_note


class _OldHipcc(hip_compiler.Hipcc):
    """A hipcc whose ROCm release predates the MI300 (gfx942), as Debian's 5.2 does."""

    @property
    def name(self) -> str:
        return "hipcc 5.2"

    def compile(self, source, function, arch, include_dirs):
        if arch == "gfx942":
            raise hip_compiler.HipccFailed(
                f"hipcc 5.2 could not compile kernel {function!r} for gfx942: invalid target ID"
            )
        return "", ""


def test_a_hipcc_that_does_not_build_the_devices_architecture_is_not_used(star, monkeypatch):
    """A ranking for an MI300X with an older ROCm's hipcc assumes occupancy and says why, instead of failing on
    the compiler's error; the architectures that hipcc builds still get it."""
    old = _OldHipcc("/usr/bin/hipcc")
    monkeypatch.setattr(hip_compiler, "available_compilers", lambda: (old,))
    assert hip_compiler.compiler_for("gfx90a") == (old, "gfx90a")
    assert hip_compiler.compiler_for("gfx942") is None
    ranking = pp.rank(star, "MI300X", blocks=BLOCKS[:1], folds=FOLDS[:1])
    assert ranking.resources == {} and "that builds the device's architecture" in ranking.resources_note


@pytest.mark.skipif(hip_compiler.compiler_for("gfx90a") is None, reason="no hipcc: registers cannot be compiled")
def test_hipcc_measures_each_folds_vgprs(star):
    ranking = pp.rank(star, "MI210", blocks=BLOCKS[:1], folds=FOLDS)
    assert set(ranking.resources) == set(FOLDS)
    assert all(
        r.arch == "gfx90a" and r.registers_per_thread > 0 and r.scalar_registers for r in ranking.resources.values()
    )


@pytest.mark.skipif(hip_compiler.compiler_for("gfx90a") is None, reason="no hipcc: registers cannot be compiled")
def test_with_hipcc_the_generated_hip_code_compiles_and_its_vgprs_are_reported(hip_kernel, hip_d3q19_kernel):
    """hipcc compiles pystencils' and lbmpy's generated HIP code of every fold for one MI250X GCD (gfx90a), and the
    choice reports the VGPRs of the fold it launches."""
    for kernel in (hip_kernel, hip_d3q19_kernel):
        choice = kernel.metadata["pystencils_perf"]
        usage = choice.resources[choice.launch.fold]
        assert usage.arch == "gfx90a" and usage.compiler.startswith("hipcc") and usage.registers_per_thread > 0
        assert str(usage) in choice.summary() and "occupancy assumed" not in choice.ranking.resources_note


#: the kernel-resource-usage remarks as LLVM documents them (llvm/test/CodeGen/AMDGPU/resource-usage-remarks.ll),
#: prefixed as hipcc prints them
REMARKS = """\
kernel.hip:3:1: remark: Function Name: kernel [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     TotalSGPRs: 28 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     VGPRs: 9 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     AGPRs: 43 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     ScratchSize [bytes/lane]: 8 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     Dynamic Stack: False [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     Occupancy [waves/SIMD]: 5 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     VGPRs Spill: 2 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:3:1: remark:     LDS Size [bytes/block]: 512 [-Rpass-analysis=kernel-resource-usage]
"""


def test_the_resource_remarks_are_read():
    """On gfx90a the AGPRs share the VGPR file (VGPRs aligned to 4 first); on gfx908 they have their own."""
    usage = hip_compiler.parse_resource_usage(REMARKS, "kernel", "gfx90a", "hipcc 6.2")
    assert (usage.registers_per_thread, usage.scalar_registers, usage.shared_memory_bytes) == (12 + 43, 28, 512)
    assert usage.spilled and str(usage) == "55 VGPRs, 28 SGPRs (gfx90a, hipcc 6.2), spills 2 registers"
    assert (usage.spill_store_bytes, usage.spill_load_bytes) == (8, 8)  # 4 B per lane of each spilled VGPR
    assert usage.spill_kept_bytes == 8
    assert hip_compiler.parse_resource_usage(REMARKS, "kernel", "gfx908").registers_per_thread == 9
    with pytest.raises(pp.PerfError, match="no resource usage for kernel 'kernel_2'"):
        hip_compiler.parse_resource_usage(REMARKS, "kernel_2", "gfx90a")


#: AMDGPU assembly as hipcc -S writes it (shortened): two loads batched behind one wait, then a loop whose
#: every load is waited for before the next issues, and which spills a register and reloads it twice
ASSEMBLY = """\
\t.text
kernel:                                 ; @kernel
; %bb.0:
\tglobal_load_dword v1, v[2:3], off
\tglobal_load_dwordx4 v[4:7], v[2:3], off offset:16
\ts_waitcnt vmcnt(0)
\tv_fmac_f32_e32 v0, s0, v1
.LBB0_1:                                ; =>This Inner Loop Header: Depth=1
\tglobal_load_dword v8, v[2:3], off
\ts_waitcnt vmcnt(0)
\tv_fmac_f32_e32 v0, s1, v8
\tbuffer_store_dword v8, off, s[0:3], 0 offset:4 ; 4-byte Folded Spill
\tglobal_load_dword v9, v[2:3], off offset:4
\ts_waitcnt vmcnt(0)
\tv_fma_f32 v0, s2, v9, v0
\tbuffer_load_dword v8, off, s[0:3], 0 offset:4 ; 4-byte Folded Reload
\tbuffer_load_dword v10, off, s[0:3], 0 offset:4 ; 4-byte Folded Reload
\ts_waitcnt vmcnt(0) lgkmcnt(0)
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
other:
\tglobal_load_dword v1, v[2:3], off
\ts_endpgm
"""


def test_load_waits_and_spills_are_read_from_the_assembly():
    """A wait counts where loads are outstanding beyond what it lets stay: the first two loads share one wait,
    the loop's each have their own (its two reloads share one), and a wait with none outstanding is none; the
    branch back marks a loop, so the static counts are not per thread. Spill bytes are those of the backend's
    comments on scratch accesses: one 4-byte store, two 4-byte reloads."""
    counts = hip_compiler.assembly_counts(ASSEMBLY, "kernel")
    assert (counts.waits, counts.loads, counts.fma_instructions, counts.looped) == (4, 6, 3, True)
    assert (counts.spill_store_bytes, counts.spill_load_bytes) == (4, 8)
    straight = hip_compiler.assembly_counts(ASSEMBLY.replace("\ts_cbranch_scc1 .LBB0_1\n", ""), "kernel")
    assert not straight.looped and straight.waits == 4
    assert not counts.loop_loads_without_fma


def test_a_loop_that_loads_without_fmas_is_told():
    """A shared-memory copy's loop loads and stores, and the FMAs come after it: their count says nothing of
    its trips, so the assembly says so (the waits per thread are then unknown)."""
    loop = ASSEMBLY.split("Inner Loop Header: Depth=1\n", 1)[1].split("\ts_cbranch_scc1", 1)[0]
    copy = ASSEMBLY.replace(loop, "\tglobal_load_dword v8, v[2:3], off\n\ts_waitcnt vmcnt(0)\n\tds_write_b32 v6, v8\n")
    counts = hip_compiler.assembly_counts(copy, "kernel")
    assert counts.looped and counts.loop_loads_without_fma
    # a block the backend placed out of line (a spill's reload) branches back above it, in no loop of its comments
    cold = "\ts_branch .LBB0_9\n.LBB0_9:\n\tbuffer_load_dword v8, off, s[0:3], 0 offset:4\n\ts_branch .LBB0_1\n"
    out_of_line = hip_compiler.assembly_counts(
        ASSEMBLY.replace("\ts_endpgm\nother", cold + "\ts_endpgm\nother"), "kernel"
    )
    assert out_of_line.looped and not out_of_line.loop_loads_without_fma
    with pytest.raises(pp.PerfError, match="no kernel 'missing'"):
        hip_compiler.assembly_counts(ASSEMBLY, "missing")


def test_lds_reads_are_counted_in_words_and_writes_are_not():
    """Shared loads are the 4-byte words LDS reads of either encoding load (``ds_read*`` up to gfx10, ``ds_load*``
    on gfx11): two addresses of 32 bits are 2, two of 64 bits 4, a byte 1; the copy's ``ds_write`` stores."""
    code = """\
kernel:
\tds_write_b32 v6, v8
\ts_barrier
\tds_read2_b32 v[0:1], v6 offset1:1
\tds_read_b32 v2, v6 offset:512
\tds_load_b32 v3, v6 offset:1024
\tds_read2_b64 v[4:7], v6 offset1:1
\tds_load_2addr_b32 v[8:9], v6 offset1:1
\tds_read_u8 v10, v6
\ts_waitcnt lgkmcnt(0)
\ts_endpgm
"""
    assert hip_compiler.assembly_counts(code, "kernel").shared_load_words == 2 + 1 + 1 + 4 + 2 + 1
    assert hip_compiler.assembly_counts(ASSEMBLY, "kernel").shared_load_words == 0


def test_fmas_of_rdna3_dual_issue_count_per_half():
    """gfx11 code pairs instructions (VOPD, as clang 19 writes it for gfx1100): both halves of a dual FMA are FMAs,
    a pair of another operation and an FMA is one, and so is an FMA with a literal operand (``v_fmaak``), so that a
    loop's trips (the thread's FMAs over the counted ones) are not overcounted where the compiler pairs them."""
    code = """\
kernel:
\tglobal_load_b32 v1, v[2:3], off
\ts_waitcnt vmcnt(0)
\tv_dual_fmac_f32 v4, s0, v1 :: v_dual_fmac_f32 v5, s1, v1
\tv_dual_mov_b32 v6, v1 :: v_dual_fmac_f32 v7, s2, v1
\tv_dual_add_nc_u32 v8, 4, v8 :: v_dual_mov_b32 v9, 0
\tv_fmaak_f32 v10, v1, v1, 0x3f800000
\tv_fmac_f32_e32 v11, s3, v1
\ts_endpgm
"""
    assert hip_compiler.assembly_counts(code, "kernel").fma_instructions == 5


@pytest.mark.skipif(hip_compiler.compiler_for("gfx90a") is None, reason="no hipcc: registers cannot be compiled")
def test_hipcc_reports_how_often_a_fold_waits_for_its_loads(star):
    """pystencils' code has no loop: each fold's compiled waits are per thread, and a fold of two points, whose
    thread loads more, waits at least as often."""
    ranking = pp.rank(star, "MI210", blocks=BLOCKS[:1], folds=FOLDS)
    waits = {fold: r.load_waits_per_thread for fold, r in ranking.resources.items()}
    assert all(w is not None and w > 0 for w in waits.values())
    assert waits[(1, 2, 1)] >= waits[(1, 1, 1)]
