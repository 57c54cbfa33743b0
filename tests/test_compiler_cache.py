"""Compiler output kept on disk: a second process compiles nothing it compiled before (issue 55: create_kernel
compiled the registers of three folds with nvcc on every run of a script)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pystencils_perf.adapters import compiler_cache, cuda_compiler

REPORT = """ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 19 registers, used 0 barriers, 380 bytes cmem[0]
"""


@dataclass(frozen=True)
class FakeCompiler:
    name: str = "fake 1.0"
    calls: list = field(default_factory=list, compare=False, hash=False, repr=False)  # not part of what it is

    def ptxas_report(self, source, function, arch, include_dirs):
        self.calls.append((function, arch))
        return REPORT.replace("sm_90", arch)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(tmp_path))
    return tmp_path / "pystencils-perf" / "compiler-output"


def test_a_second_call_reads_what_the_first_compiled(cache_dir):
    compiler = FakeCompiler()
    first = cuda_compiler.compile_resources.__wrapped__("void k() {}", "k", "sm_90", compiler)
    again = cuda_compiler.compile_resources.__wrapped__("void k() {}", "k", "sm_90", compiler)  # no lru_cache
    assert first == again and first.registers_per_thread == 19
    assert compiler.calls == [("k", "sm_90")] and len(list(cache_dir.iterdir())) == 1


def test_another_architecture_source_or_compiler_is_compiled_afresh(cache_dir):
    compiler = FakeCompiler()
    compile_ = lambda arch, source="void k() {}", c=compiler: compiler_cache.compiler_output(  # noqa: E731
        c, arch, "k", source, lambda: (c.ptxas_report(source, "k", arch, ()),)
    )
    compile_("sm_90")
    compile_("sm_80")
    compile_("sm_90", "void k() { }")
    other = FakeCompiler(name="fake 2.0")
    compile_("sm_90", c=other)
    assert len(compiler.calls) == 3 and len(other.calls) == 1 and len(list(cache_dir.iterdir())) == 4


def test_a_damaged_entry_is_compiled_again(cache_dir):
    compiler = FakeCompiler()
    output = compiler_cache.compiler_output(compiler, "sm_90", "k", "src", lambda: ("report",))
    (entry,) = cache_dir.iterdir()
    entry.write_text('{"format": "pystencils-perf compiler output 1", "texts": [')  # cut short
    assert compiler_cache.compiler_output(compiler, "sm_90", "k", "src", lambda: ("again",)) == ("again",)
    assert output == ("report",)


def test_a_cache_folder_that_takes_no_files_keeps_none(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(blocker))  # its subfolders cannot be made
    assert compiler_cache.compiler_output(FakeCompiler(), "sm_90", "k", "src", lambda: ("report",)) == ("report",)
