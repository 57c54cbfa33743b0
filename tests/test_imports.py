"""Start-up imports (issue 55): ``import pystencils_perf``, the command line's ``--help`` and ``devices``, and
loading a plugin import none of the heavy libraries; a plugin imports them in its hooks. Each check runs in a
fresh interpreter, where nothing else has imported them. The timings: benchmarks/bench_startup.py."""

import os
import subprocess
import sys

import pytest

from pystencils_perf.plugins import installed_plugins

HEAVY = ("sympy", "numpy", "pystencils", "lbmpy", "islpy", "loopy", "kernel_tuner")


def heavy_imports(code: str, **env) -> list[str]:
    """The heavy libraries imported once `code` has run in a fresh interpreter (its output is swallowed)."""
    script = (
        "import contextlib, io, sys\nwith contextlib.redirect_stdout(io.StringIO()):\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_importing_the_package_imports_no_heavy_library():
    assert heavy_imports("import pystencils_perf") == []


@pytest.mark.parametrize("argv", [["--help"], ["devices"], ["--version"]])
def test_the_command_line_starts_without_the_heavy_libraries(argv):
    run = f"from pystencils_perf.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert heavy_imports(run) == []


def test_the_plugins_load_without_the_heavy_libraries():
    """The plugin manager with every entry point, and the hooks that the command line's parser asks (models,
    filters, options, footprint backends)."""
    load = (
        "import argparse, pystencils_perf as pp\npm = pp.get_plugin_manager()\n"
        "pm.hook.perf_models(); pm.hook.perf_prune_filters(); pm.hook.perf_addoption(parser=argparse.ArgumentParser())\n"
        "from pystencils_perf.estimate.plugin import footprint_backends\nfootprint_backends()"
    )
    assert heavy_imports(load) == []


@pytest.mark.parametrize("name", sorted(installed_plugins()))
def test_an_entry_point_imports_no_heavy_library(name):
    module = installed_plugins()[name].partition(":")[0]
    assert heavy_imports(f"import {module}") == []


def test_the_public_names_are_those_of_all():
    import pystencils_perf as pp

    assert set(pp.__all__) <= set(dir(pp))
    for name in pp.__all__:
        assert getattr(pp, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        pp.nothing  # noqa: B018


def test_rank_stays_the_function_when_its_module_is_imported_later():
    """Importing ``pystencils_perf.rank`` (the plugin manager does) would bind the module to the package's `rank`."""
    check = (
        "import pystencils_perf as pp, pystencils_perf.rank, sys\n"
        "assert pp.rank is sys.modules['pystencils_perf.rank'].rank, pp.rank"
    )
    heavy_imports(check)


def test_lazy_and_complete_parsers_print_the_same_help():
    """`main`'s parser adds a subcommand's arguments when it is used; the documentation's has them all at once."""
    from pystencils_perf.cli import build_parser

    def helps(parser):
        subcommands = next(a for a in parser._actions if a.dest == "command").choices
        return [parser.format_help()] + [p.format_help() for p in subcommands.values()]

    assert helps(build_parser(lazy=True)) == helps(build_parser())
