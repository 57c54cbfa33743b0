"""Thread folding as generated code: coverage, shared loads, launch grid, consistency with the model, registers.

Every check enumerates the accesses of the whole launch grid on a small domain
(13 x 7 x 5 points) that no fold divides, so the guards of the last threads matter.
"""

import itertools
import math
import shutil

import numpy as np
import pytest

import pystencils_perf as pp
from pystencils_perf.adapters import cuda_compiler
from pystencils_perf.adapters.pystencils.folding import FoldedLaunchConfiguration, create_folded_kernel
from pystencils_perf.estimate.addresses import compile_kernel, thread_coords

from . import cuda_emulation
from .conftest import ODD_DOMAIN
from .test_harvest import assert_matches_c_code

FOLDS = [(1, 1, 1), (1, 2, 1), (1, 1, 2), (2, 1, 1), (1, 2, 2)]
BLOCKS = [(4, 2, 2), (8, 1, 4)]
GHOST_LAYERS = {"star3d_r4": 4, "allen_cahn_phase_field": 1, "d3q19_srt": 1}


@pytest.fixture(scope="module")
def folded(odd_domain_assignments):
    """(kernel name, fold) -> generated kernel, each generated once."""
    cache = {}

    def get(name, fold):
        if (name, fold) not in cache:
            cache[(name, fold)] = create_folded_kernel(odd_domain_assignments[name], fold=fold)
        return cache[(name, fold)]

    return get


def launch_accesses(model, block):
    """{(field, kind): sorted [(thread coordinates, element index)]} over the whole launch grid."""
    compiled = compile_kernel(model, block)
    grid = [range(-(-n // b)) for n, b in zip(model.work_items, block)]
    found = {}
    for bid in itertools.product(*grid):
        coords = thread_coords(block, bid)
        for ins in compiled.instructions:
            active = coords[ins.active(coords)]
            pairs = zip(map(tuple, active.tolist()), ins.address.evaluate(active).tolist())
            found.setdefault((ins.field, ins.kind.value), []).extend(pairs)
    return {key: sorted(pairs) for key, pairs in found.items()}


def interior_elements(field, ghost_layers):
    """Element index of every interior point (all index components) of a field, spatial dimensions first."""
    spatial = len(ODD_DOMAIN)
    ranges = [range(ghost_layers, n - ghost_layers) for n in field.shape[:spatial]]
    ranges += [range(n) for n in field.shape[spatial:]]
    return sorted(sum(i * s for i, s in zip(idx, field.strides)) for idx in itertools.product(*ranges))


@pytest.mark.slow
@pytest.mark.parametrize("fold", FOLDS)
@pytest.mark.parametrize("name", sorted(GHOST_LAYERS))
def test_every_interior_point_is_written_exactly_once(folded, name, fold):
    model = pp.harvest(folded(name, fold))
    assert model.fold == fold
    assert model.lattice_updates == math.prod(ODD_DOMAIN)
    for block in BLOCKS:
        accesses = launch_accesses(model, block)
        stored_fields = {f for f, kind in accesses if kind == "store"}
        assert stored_fields == {a.field for a in model.stores}
        for fname in stored_fields:
            stores = [element for _, element in accesses[(fname, "store")]]
            assert sorted(stores) == interior_elements(model.field_by_name(fname), GHOST_LAYERS[name])
        for (fname, kind), pairs in accesses.items():
            size = math.prod(model.field_by_name(fname).shape)
            assert all(0 <= element < size for _, element in pairs), f"{kind} outside {fname}"


@pytest.mark.slow
@pytest.mark.parametrize("fold", FOLDS[1:])
@pytest.mark.parametrize("name", sorted(GHOST_LAYERS))
def test_generated_folding_is_what_the_model_predicts(folded, name, fold):
    """Thread by thread, the generated folded kernel accesses what KernelModel.folded() says."""
    generated = pp.harvest(folded(name, fold))
    predicted = pp.harvest(folded(name, (1, 1, 1))).folded(fold)
    assert generated.work_items == predicted.work_items
    assert launch_accesses(generated, BLOCKS[0]) == launch_accesses(predicted, BLOCKS[0])


@pytest.mark.parametrize("fold", [(1, 2, 1), (1, 2, 2)])
def test_generated_addresses_match_the_c_code(folded, fold):
    kernel = folded("star3d_r4", fold)
    assert_matches_c_code(kernel, pp.harvest(kernel))


def test_shared_values_are_loaded_once(folded):
    """The 25-point star folded 2x in y: 2 x 25 loads, 8 of them shared (the y line overlaps by 8)."""
    kernel = folded("star3d_r4", (1, 2, 1))
    model = pp.harvest(kernel)
    distinct = {(a.field, a.address) for a in model.loads}
    assert len(distinct) == 2 * 25 - 8
    assert kernel.get_c_code().count("_data_src[") == len(distinct)  # each in one place of the code
    assert pp.harvest(folded("d3q19_srt", (1, 2, 1))).loads.__len__() == 2 * 19  # pull scheme: nothing shared


@pytest.mark.parametrize("fold", FOLDS)
def test_launch_grid_covers_the_folded_work(folded, fold):
    config = folded("star3d_r4", fold).get_launch_configuration()
    work = tuple(-(-n // f) for n, f in zip(ODD_DOMAIN, fold))
    block, grid = config.evaluate()
    assert grid == tuple(-(-w // b) for w, b in zip(work, block))
    if fold != (1, 1, 1):
        assert isinstance(config, FoldedLaunchConfiguration) and config.fold == fold
        assert tuple(int(p()) for p in config.num_points) == ODD_DOMAIN


@pytest.mark.parametrize("fold", [(2, 1, 1), (1, 2, 1), (3, 2, 1)])
def test_2d_kernels_fold_in_x_and_y(fold):
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[9, 15]")  # 13 x 7 interior points
    jacobi = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
    generated = pp.harvest(create_folded_kernel(jacobi, fold=fold))
    assert generated.work_items == (-(-13 // fold[0]), -(-7 // fold[1]), 1)
    accesses = launch_accesses(generated, (4, 2, 1))
    assert accesses == launch_accesses(pp.harvest(create_folded_kernel(jacobi)).folded(fold), (4, 2, 1))
    stores = sorted(element for _, element in accesses[("dst", "store")])
    assert stores == sorted(y * 15 + x for y in range(1, 8) for x in range(1, 14))


@pytest.mark.parametrize(
    "fold, guarded", [((1, 2, 1), False), ((1, 4, 1), False), ((2, 1, 1), True), ((3, 2, 1), True)]
)
def test_a_fold_that_divides_the_points_of_an_axis_needs_no_guard_along_it(fold, guarded):
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[10, 15]")  # 13 x 8 interior points: 2 and 4 divide y, nothing divides x
    jacobi = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
    kernel = create_folded_kernel(jacobi, fold=fold)
    code = kernel.get_c_code()
    assert (code.count("if(") > 1 or "?" in code) == guarded  # beyond the GPU axes' own guard
    generated = pp.harvest(kernel)
    accesses = launch_accesses(generated, (4, 2, 1))
    assert accesses == launch_accesses(pp.harvest(create_folded_kernel(jacobi)).folded(fold), (4, 2, 1))
    stores = sorted(element for _, element in accesses[("dst", "store")])
    assert stores == sorted(y * 15 + x for y in range(1, 9) for x in range(1, 14))


def test_block_size_is_the_launch_configurations(odd_domain_assignments):
    kernel = create_folded_kernel(odd_domain_assignments["star3d_r4"], fold=(1, 1, 2), block=(8, 2, 2))
    assert kernel.get_launch_configuration().evaluate() == ((8, 2, 2), (2, 4, 2))


def test_invalid_folds_are_clear_errors(odd_domain_assignments, jacobi_kernel):
    import pystencils as ps

    star = odd_domain_assignments["star3d_r4"]
    with pytest.raises(pp.ConfigurationError, match="three positive integers"):
        create_folded_kernel(star, fold=(1, 0, 1))
    src, dst = ps.fields("src, dst: double[9, 9]")
    with pytest.raises(pp.ConfigurationError, match=r"fold \(1, 1, 2\) folds an axis the 2D kernel does not have"):
        create_folded_kernel([ps.Assignment(dst[0, 0], src[1, 0])], fold=(1, 1, 2))
    cfg = ps.CreateKernelConfig()
    cfg.gpu.indexing_scheme = "linear1d"
    with pytest.raises(pp.ConfigurationError, match="Linear3D"):
        create_folded_kernel(star, cfg, fold=(1, 2, 1))
    with pytest.raises(pp.ConfigurationError, match="independence check"):
        create_folded_kernel(star, ps.CreateKernelConfig(skip_independence_check=True), fold=(1, 2, 1))
    launch = pp.LaunchConfig((8, 8, 1), (1, 2, 1))
    with pytest.raises(pp.ConfigurationError, match="regenerates it; pass ApplyOptions"):
        pp.get_plugin_manager().hook.perf_apply(kernel=jacobi_kernel, launch=launch, options=None)


PTXAS_REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'star3d_r4' for 'sm_90'
ptxas info    : Function properties for star3d_r4
    8 bytes stack frame, 16 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 384 bytes smem
"""


def test_ptxas_report_is_read():
    usage = cuda_compiler.parse_resource_usage(PTXAS_REPORT, "star3d_r4", "sm_90", "nvcc 13.0")
    assert (usage.registers_per_thread, usage.spill_store_bytes, usage.spill_load_bytes) == (255, 16, 24)
    assert usage.shared_memory_bytes == 384 and usage.spilled
    assert str(usage).startswith("255 registers (sm_90, nvcc 13.0), spills 16 B stored")
    with pytest.raises(pp.PerfError, match="no resource usage for kernel 'other'"):
        cuda_compiler.parse_resource_usage(PTXAS_REPORT, "other", "sm_90")


def _compilers():
    """Each compiler this machine has, as a pytest parameter (a skip where there is none)."""
    found = cuda_compiler.available_compilers()
    return [pytest.param(c, id=type(c).__name__) for c in found] or [
        pytest.param(None, marks=pytest.mark.skip(reason="neither nvcc on PATH nor the NVRTC wheels"))
    ]


@pytest.mark.slow
@pytest.mark.parametrize("compiler", _compilers())
def test_registers_of_generated_variants(folded, compiler, monkeypatch, tmp_path):
    """Folding the Allen-Cahn kernel keeps two cells' populations in registers: more registers. The folds are
    compiled as one translation unit (on one core: one unit for all), and each reports what it reports alone."""
    from pystencils.include import get_pystencils_include_path

    arch = "sm_80"  # built by every CUDA release since 11.0
    monkeypatch.setattr(cuda_compiler, "available_cores", lambda: 1)
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(tmp_path))  # nothing kept by an earlier test
    compilations = []
    report = type(compiler).ptxas_report
    monkeypatch.setattr(type(compiler), "ptxas_report", lambda *a: compilations.append(a[2]) or report(*a))
    kernels = [folded("allen_cahn_phase_field", fold) for fold in ((1, 1, 1), (1, 1, 2), (1, 2, 1))]
    together = cuda_compiler.kernels_resources(kernels, arch, compiler)
    assert len(compilations) == 1 and compilations[0].endswith("__pystencils_perf_0")  # one joint unit
    monkeypatch.undo()  # the checks below compile each fold alone
    unfolded, twice, _ = together
    assert 0 < unfolded.registers_per_thread < twice.registers_per_thread <= 255
    assert not unfolded.spilled and unfolded.compiler == compiler.name
    units = [cuda_compiler.cuda_unit(k) for k in kernels]
    alone = [  # compiled here, past the disk, where the call above kept each one's part of the joint report
        cuda_compiler.parse_resource_usage(
            compiler.ptxas_report(u.source, u.function, arch, (get_pystencils_include_path(),)),
            u.function,
            arch,
            compiler.name,
        )
        for u in units
    ]
    assert alone == list(together)
    calls = cuda_compiler.compile_units.cache_info().hits
    cuda_compiler.kernels_resources(kernels[1:2], arch, compiler)
    assert cuda_compiler.compile_units.cache_info().hits == calls  # another set of units
    assert cuda_compiler.kernels_resources(kernels, arch, compiler) == together
    assert cuda_compiler.compile_units.cache_info().hits == calls + 1  # cached per set of units


@pytest.mark.skipif(cuda_compiler.find_nvrtc() is None, reason="the NVRTC and ptxas wheels are not installed")
def test_nvrtc_leaves_the_locale_alone():
    """NVRTC sets its thread's locale to "C"; kept so, Python would then read UTF-8 files as ASCII."""
    import locale
    import threading

    def compile_between_two_looks(seen):  # in a thread of its own: it starts with the process's locale
        seen.append(locale.getpreferredencoding(False))
        source = 'extern "C" __global__ void fill(float *a) { a[threadIdx.x] = 1.0f; }\n'
        seen.append(cuda_compiler.compile_resources(source, "fill", "sm_70", cuda_compiler.find_nvrtc()))
        seen.append(locale.getpreferredencoding(False))

    seen = []
    thread = threading.Thread(target=compile_between_two_looks, args=(seen,))
    thread.start()
    thread.join()
    before, usage, after = seen
    assert usage.arch == "sm_70" and usage.registers_per_thread > 0 and usage.compiler.startswith("NVRTC")
    assert after == before


def test_compiler_for_device(monkeypatch):
    """The first compiler that builds the architecture exactly; the nearest one only where none does."""
    nvcc13 = cuda_compiler.Nvcc("/opt/cuda-13/bin/nvcc")
    nvrtc11 = cuda_compiler.Nvrtc("libnvrtc.so.11.2", "ptxas", ())
    archs = {nvcc13: ("sm_75", "sm_80", "sm_90"), nvrtc11: ("sm_70", "sm_75", "sm_80")}
    for compiler in archs:
        object.__setattr__(compiler, "archs", archs[compiler])  # what cached_property would hold
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: (nvcc13, nvrtc11))
    assert cuda_compiler.compiler_for("9.0") == (nvcc13, "sm_90")
    assert cuda_compiler.compiler_for("8.0") == (nvcc13, "sm_80")
    assert cuda_compiler.compiler_for("7.0") == (nvrtc11, "sm_70")  # Volta, which nvcc 13 dropped
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: (nvcc13,))
    assert cuda_compiler.compiler_for("7.0") == (nvcc13, "sm_75")  # nearest, same register file
    assert cuda_compiler.compiler_for(None) == (nvcc13, "sm_90")
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: ())
    assert cuda_compiler.compiler_for("9.0") is None


def _gpu_available() -> str | None:
    """Why the cupy comparison cannot run here, or None."""
    try:
        import cupy
    except ImportError:
        return "cupy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA GPU"
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return f"no CUDA GPU ({e})"
    return None


def _on_gpu(array):
    """A cupy copy of `array` with the same strides (the kernel indexes with the field's fixed strides)."""
    import cupy

    order = np.argsort(array.strides)[::-1]  # slowest first: this transpose is contiguous
    return cupy.asarray(np.ascontiguousarray(array.transpose(order))).transpose(np.argsort(order))


@pytest.mark.skipif(_gpu_available() is not None, reason=f"GPU comparison skipped: {_gpu_available()}")
@pytest.mark.parametrize("name", ["star3d_r4", "allen_cahn_phase_field"])
def test_folded_kernels_on_the_gpu_match_the_cpu(cpu_results, folded, name):
    """Folded and unfolded kernels compiled by pystencils' cupy JIT, on random data, against the CPU kernel."""
    import cupy

    for fold in FOLDS:
        kernel = folded(name, fold)
        expected = cpu_results(name, kernel)
        on_gpu = {fname: _on_gpu(a) for fname, a in cuda_emulation.field_arrays(kernel, seed=1).items()}
        kernel.compile()(**on_gpu)
        for fname, a in on_gpu.items():  # outputs updated alike, everything else untouched
            np.testing.assert_allclose(
                cupy.asnumpy(a), expected[fname], rtol=1e-12, atol=1e-14, err_msg=f"{fname} {fold}"
            )


@pytest.fixture(scope="module")
def cpu_results(odd_domain_assignments, tmp_path_factory):
    """kernel name -> its field arrays after pystencils' CPU kernel ran on `cuda_emulation.field_arrays`."""
    import pystencils as ps
    from pystencils.jit import CpuJit

    # pystencils' CPU JIT caches in the home directory whatever PYSTENCILS_CACHE_DIR says
    jit = CpuJit(objcache=tmp_path_factory.mktemp("cpujit"))
    cache = {}

    def get(name, kernel):
        if name not in cache:
            config = ps.CreateKernelConfig(target=ps.Target.CPU, jit=jit)
            cpu = ps.create_kernel(odd_domain_assignments[name], config)
            cache[name] = cuda_emulation.field_arrays(kernel, seed=1)
            cpu.compile()(**cache[name])
        return cache[name]

    return get


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH: generated code cannot be run on the CPU")
@pytest.mark.parametrize(
    "name, fold",
    [("star3d_r4", (1, 2, 1)), ("star3d_r4", (2, 1, 1)), ("star3d_r4", (1, 2, 2)), ("allen_cahn_phase_field", (1, 1, 2)),
     ("allen_cahn_phase_field", (2, 1, 1)), ("d3q19_srt", (1, 2, 1))],
)  # fmt: skip
def test_folded_code_computes_what_pystencils_cpu_code_computes(cpu_results, folded, name, fold, tmp_path):
    """The CUDA code, run thread by thread on the CPU (g++), against pystencils' CPU kernel on the same data."""
    kernel = folded(name, fold)
    expected, emulated = cpu_results(name, kernel), cuda_emulation.field_arrays(kernel, seed=1)
    cuda_emulation.run_emulated(kernel, emulated, tmp_path)
    for fname in expected:  # outputs alike, inputs and ghost layers untouched
        np.testing.assert_allclose(emulated[fname], expected[fname], rtol=1e-12, atol=1e-15, err_msg=fname)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH: generated code cannot be run on the CPU")
def test_folds_that_divide_the_domain_compute_what_pystencils_cpu_code_computes(tmp_path):
    """12 x 8 x 6 points: 2 divides every axis, so these folds' points carry no guards of their own."""
    import pystencils as ps
    from pystencils.jit import CpuJit

    from pystencils_perf.catalog import star_3d_assignments

    assignments = star_3d_assignments(4, (12, 8, 6))
    cpu = ps.create_kernel(
        assignments, ps.CreateKernelConfig(target=ps.Target.CPU, jit=CpuJit(objcache=tmp_path / "jit"))
    )
    for fold in [(2, 1, 1), (1, 2, 1), (1, 2, 2), (2, 2, 2)]:
        kernel = create_folded_kernel(assignments, fold=fold)
        assert kernel.get_c_code().count("if(") == 1  # only the GPU axes' own guard
        expected, emulated = (cuda_emulation.field_arrays(kernel, seed=1) for _ in range(2))
        cpu.compile()(**expected)
        cuda_emulation.run_emulated(kernel, emulated, tmp_path)
        for fname in expected:
            np.testing.assert_allclose(
                emulated[fname], expected[fname], rtol=1e-12, atol=1e-15, err_msg=f"{fname} {fold}"
            )
