"""The README's main command picks the same launch whichever compilers a machine has (issue 26, item 3).

A fresh install brings the NVRTC 11.8 wheels, which build sm_70 for the V100; a machine with a CUDA 13
toolkit has nvcc on PATH too, which no longer builds sm_70. The exact architecture wins, so both set-ups
compile the same code, count the same registers and rank alike.
"""

import shutil
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.adapters import cuda_compiler
from pystencils_perf.spec import load_spec

MAIN_COMMAND_SPEC = Path(__file__).resolve().parents[1] / "examples" / "star3d_r4.py"


@pytest.fixture(scope="module")
def main_kernel():
    return load_spec(MAIN_COMMAND_SPEC)


def _pick(spec, monkeypatch, compilers):
    monkeypatch.setattr(cuda_compiler, "available_compilers", lambda: compilers)
    ranking = pp.rank(spec.kernel, "V100", domain_shape=spec.domain_shape)
    return pp.select(ranking), ranking


@pytest.mark.slow
def test_the_main_commands_pick_is_the_same_with_and_without_a_cuda_13_toolkit(main_kernel, monkeypatch):
    nvrtc = cuda_compiler.find_nvrtc()
    assert nvrtc is not None, "the NVRTC wheels are a default dependency: a fresh install has them"
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on PATH: the toolkit set-up cannot be formed here")
    wheels_only, ranked = _pick(main_kernel, monkeypatch, (nvrtc,))
    with_toolkit, ranked_too = _pick(main_kernel, monkeypatch, (cuda_compiler.Nvcc(nvcc), nvrtc))
    assert wheels_only.launch == with_toolkit.launch
    assert ranked.resources_note == ranked_too.resources_note and "sm_70, NVRTC 11.8" in ranked.resources_note
    assert [c.launch for c in ranked.candidates] == [c.launch for c in ranked_too.candidates]


def test_nvrtc_stands_in_only_for_an_architecture_it_builds_exactly():
    """The validations' `--nvrtc` tables take NVRTC 11.8 for an sm_XY it builds, and nothing nearby for one it does
    not (nvcc's nearest-architecture fallback would silently compile something else)."""
    nvrtc = cuda_compiler.find_nvrtc()
    assert nvrtc is not None, "the NVRTC wheels are a default dependency: a fresh install has them"
    compiler, arch = cuda_compiler.nvrtc_for("sm_75")
    assert (compiler.name, arch) == (nvrtc.name, "sm_75") and "sm_75" in nvrtc.archs
    assert "sm_120" not in nvrtc.archs and cuda_compiler.nvrtc_for("sm_120") is None
