"""Kernels that ranked silently though they cannot run as ranked (issue 58, item 4): each is a warning naming the
problem (`checks`), and a right kernel is none."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.errors import PerfWarning

ps = pytest.importorskip("pystencils")

ROOT = Path(__file__).resolve().parents[1]
ONE_LAUNCH = dict(blocks=[(32, 4, 1)], folds=[(1, 1, 1)], compile_resources=False, jobs=1)


def _jacobi(src, dst):
    return [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]


def test_a_right_kernel_warns_nothing():
    src, dst = ps.fields("src, dst: double[66, 66]")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfWarning)
        pp.rank(_jacobi(src, dst), "V100", **ONE_LAUNCH)
        hip = ps.create_kernel(_jacobi(src, dst), ps.CreateKernelConfig(target=ps.Target.HIP))
        pp.rank(hip, "MI250X", **ONE_LAUNCH)


def test_fields_larger_than_any_gpus_memory_warn():
    src, dst = ps.fields("src, dst: double[100000, 100000, 100000]")
    update = [ps.Assignment(dst[0, 0, 0], (src[1, 0, 0] + src[-1, 0, 0]) / 2)]
    with pytest.warns(
        PerfWarning,
        match=r"its fields \(dst, src\) take 1\.6e\+16 B, more than any GPU's memory \(the "
        r"most in the device library is MI300X's 192 GB; device files record no",
    ):
        pp.rank(update, "V100", **{**ONE_LAUNCH, "blocks": [(32, 4, 8)]})  # 12500 blocks along z: within CUDA's


def test_an_in_place_stencil_warns():
    src = ps.fields("src: double[66, 66]")
    with pytest.warns(
        PerfWarning,
        match=r"the load src\[.*\] loads elements of field 'src' that other threads store "
        r"\(an in-place update\)",
    ):
        pp.rank([ps.Assignment(src[0, 0], (src[1, 0] + src[-1, 0]) / 2)], "V100", **ONE_LAUNCH)


@pytest.mark.parametrize(
    "target, device, message",
    [
        ("HIP", "V100", "is HIP code, but V100-PCIe-32GB runs CUDA code"),
        ("CUDA", "MI250X", "is CUDA code, but MI250X-GCD runs HIP code"),
    ],
)
def test_code_for_the_other_vendor_warns(target, device, message):
    src, dst = ps.fields("src, dst: double[66, 66]")
    kernel = ps.create_kernel(_jacobi(src, dst), ps.CreateKernelConfig(target=getattr(ps.Target, target)))
    with pytest.warns(PerfWarning, match=message):
        pp.rank(kernel, device, **ONE_LAUNCH)


def test_no_ghost_layers_read_outside_the_field(tmp_path):
    """A SPEC's `kernel` carries its CreateKernelConfig: with ghost_layers=0 the threads cover the whole field, and
    src[-1, 0] of the first row is before it. One line on stderr, the ranking as before."""
    spec = tmp_path / "spec.py"
    spec.write_text(
        "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[66, 66]')\n"
        "kernel = ps.create_kernel([ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0]) / 2)], "
        "ps.CreateKernelConfig(target=ps.Target.CUDA, ghost_layers=0))\n"
    )
    env = {**os.environ, "PYSTENCILS_CACHE_DIR": str(tmp_path / "psc")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pystencils_perf.cli",
            "rank",
            str(spec),
            "--device",
            "V100",
            "--blocks",
            "32x4x1",
            "--fold",
            "1x1x1",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0 and "best: " in done.stdout
    assert done.stderr.splitlines() == [
        "pystencils-perf: warning: kernel 'kernel': the load src[bdim.x*bid.x + 66*bdim.y*bid.y + tid.x + 66*tid.y "
        "- 66] reaches src[-1, 0], outside field 'src' of shape (66, 66): it reads memory that is not the field's"
    ]


def test_a_cuda_description_reading_outside_its_array_warns():
    cuda = pytest.importorskip("pystencils_perf_cuda")
    kernel = cuda.CudaKernel(
        name="shifted",
        arrays=(cuda.Array("a", "double", (64, 64)), cuda.Array("b", "double", (64, 64))),
        threads=(64, 64),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        loads=("a[y + 5000][x]",),
        stores=("b[y][x]",),
    )
    with pytest.warns(
        PerfWarning,
        match=r"kernel 'shifted': the load a\[.* \+ 320000\] reaches a\[5000, 0\], outside "
        r"field 'a' of shape \(64, 64\)",
    ):
        pp.rank(kernel, "V100", **ONE_LAUNCH)


def test_a_replay_gives_a_kernel_warning_once(tmp_path):
    """The variants of a replayed cache rank in worker processes, several tasks to a variant: each worker's warning
    is given by the parent, once."""
    spec, cache = tmp_path / "spec.py", tmp_path / "cache.json"
    spec.write_text(
        "import pystencils as ps\nlattice_updates = 64 * 64\n\ndef kernel_for(params):\n"
        "    src = ps.fields('src: double[66, 66]')\n"
        "    return [ps.Assignment(src[0, 0], (src[1, 0] + src[-1, 0]) / 2)]\n"
    )
    entries = {
        f"{bx},{by}": {"block_size_x": bx, "block_size_y": by, "time": 1.0 + bx / 100 + by / 10}
        for bx in (8, 16, 32, 64)
        for by in (1, 2, 4)
    }
    cache.write_text(json.dumps({"device_name": "Test GPU", "cache": entries}))
    env = {**os.environ, "PYSTENCILS_CACHE_DIR": str(tmp_path / "psc"), "PYSTENCILS_PERF_TUNING_DIR": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pystencils_perf.cli",
            "tune",
            str(spec),
            "--device",
            "V100",
            "--replay",
            str(cache),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "in-place update" in line] == [
        "pystencils-perf: warning: kernel 'kernel': the load src[bdim.x*bid.x + 66*bdim.y*bid.y + tid.x + 66*tid.y "
        "+ 133] loads elements of field 'src' that other threads store (an in-place update): GPU threads run in no "
        "fixed order, so it reads old or new values at random; store into another field"
    ]
