"""The layers the package promises: no import cycle, a generator-neutral core, pystencils internals in one place."""

import importlib.util
import sys
from pathlib import Path

import pytest

from pystencils_perf.errors import ConfigurationError

TOOLS = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture(scope="module")
def import_graph():
    spec = importlib.util.spec_from_file_location("import_graph", TOOLS / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module


def test_no_cycles_and_a_generator_neutral_core(import_graph):
    graph, problems = import_graph.check()
    assert problems == []
    assert "pystencils_perf.adapters.pystencils.harvest" in graph and "pystencils_perf.metrics" in graph


def test_the_checker_finds_a_cycle_and_a_layer_violation(import_graph):
    assert import_graph.find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_graph.find_cycle({"a": {"b"}, "b": set()}) is None
    assert import_graph.layer("pystencils_perf.adapters.pystencils.api") == "generator"
    assert import_graph.layer("pystencils_perf.rank") == "core"
    assert import_graph.layer("pystencils_perf.cli") == "facade"


def test_pystencils_internals_of_the_installed_version_are_there():
    from pystencils_perf.adapters.pystencils import compat

    version = compat.pystencils_version()
    assert version in compat.SUPPORTED_VERSIONS, f"pystencils {version} is not a supported version"
    driver = compat.check_driver()
    for method in compat.DRIVER_METHODS:
        assert callable(getattr(driver, method))


def test_counter_names_are_what_the_installed_pystencils_generates():
    import pystencils as ps

    from pystencils_perf.adapters.pystencils import compat

    src, dst = ps.fields("src, dst: double[8, 8, 8]")
    kernel = ps.create_kernel([ps.Assignment(dst[0, 0, 0], src[1, 0, 0])], ps.CreateKernelConfig(target=ps.Target.CUDA))
    code = kernel.get_c_code() if hasattr(kernel, "get_c_code") else ps.get_code_str(kernel)
    for axis in range(3):
        assert compat.counter_name(axis) in code


def test_a_driver_without_the_private_methods_is_refused(monkeypatch):
    from pystencils.codegen.driver import DefaultKernelCreationDriver

    from pystencils_perf.adapters.pystencils import compat

    owner = next(c for c in DefaultKernelCreationDriver.__mro__ if "_get_axes_factory" in vars(c))  # 2.1: a base class
    monkeypatch.delattr(owner, "_get_axes_factory")
    with pytest.raises(ConfigurationError, match=r"pystencils 2\.\d+ lacks _get_axes_factory"):
        compat.check_driver()


#: tracked files larger than this belong under validation/data/, with their provenance (validation/README.md)
LARGE_FILE_BYTES = 1 << 20


def large_tracked_files(root: Path, limit: int = LARGE_FILE_BYTES) -> list[str]:
    """Tracked files over `limit` bytes outside validation/data/ (`git ls-files`; skips outside a git checkout)."""
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    paths = [p for p in listed.stdout.decode().split("\0") if p and not p.startswith("validation/data/")]
    return sorted(p for p in paths if (root / p).is_file() and (root / p).stat().st_size > limit)


def test_no_large_file_outside_the_data_folder():
    """The data policy (validation/README.md): a large data file is stored once, under validation/data/."""
    assert large_tracked_files(TOOLS.parent) == []


def test_the_size_check_sees_a_large_file(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "validation" / "data").mkdir(parents=True)
    (tmp_path / "big.png").write_bytes(b"x" * 2048)
    (tmp_path / "validation" / "data" / "big.csv").write_bytes(b"x" * 2048)
    (tmp_path / "small.md").write_bytes(b"x")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    assert large_tracked_files(tmp_path, limit=1024) == ["big.png"]


def test_a_vendor_is_one_entry_and_its_compilers():
    """What a vendor means sits in `vendors.VENDORS` (issue 57: six tables); only its compilers, which are the
    generator layer's, sit apart, and every vendor has them."""
    from pystencils_perf.adapters.compilers import TOOLCHAINS
    from pystencils_perf.launch import grid_limits
    from pystencils_perf.vendors import VENDORS
    import pystencils_perf as pp

    assert set(TOOLCHAINS) == set(VENDORS)
    for name in ("V100", "MI210"):
        device = pp.get_device(name)
        assert grid_limits(device) is VENDORS[device.vendor].grid
        assert device.architecture in VENDORS[device.vendor].architectures


def test_the_checker_keeps_types_plugins_and_the_pipeline_apart(import_graph, tmp_path):
    """Issue 57, item 1: launch.py held the launch types and the candidates plugin, and asked the plugin manager."""
    package = import_graph.PACKAGE
    sources = {
        "hookspecs": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .launch import LaunchConfig\n",
        "launch": "from .hookspecs import hookimpl\n@hookimpl\ndef perf_candidates(model, device, options):\n    pass\n",
        "rank": "@hookimpl(trylast=True)\ndef perf_select(ranking):\n    pass\n",
        "selection": "from .rank import rank\n@hookimpl\ndef perf_select(ranking):\n    pass\n",
        "plugins": "",
    }
    paths = {}
    for name, text in sources.items():
        paths[f"{package}.{name}"] = tmp_path / f"{name}.py"
        paths[f"{package}.{name}"].write_text(text)
    graph = {
        f"{package}.launch": {f"{package}.plugins", f"{package}.hookspecs"},
        f"{package}.selection": {f"{package}.rank"},
        f"{package}.rank": set(),
        f"{package}.hookspecs": set(),
        f"{package}.plugins": set(),
    }
    problems = import_graph.check_plugin_rooms(graph, paths)
    assert f"module {package}.launch, whose types the hooks exchange, implements a hook" in problems
    assert f"type module {package}.launch imports {package}.plugins, a room above it" in problems
    assert f"the pipeline {package}.rank implements a hook" in problems
    assert f"plugin module {package}.selection imports the pipeline {package}.rank" in problems


def test_house_sizes_measures_a_revision(capsys):
    """tools/house_sizes.py (issue 57's before and after): the committed tree has no import cycle or problem and no
    module docstring citing validation/, as the checks above hold."""
    if not (TOOLS.parent / ".git").exists():
        pytest.skip("needs a git checkout")
    spec = importlib.util.spec_from_file_location("house_sizes", TOOLS / "house_sizes.py")
    house_sizes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(house_sizes)
    sizes = house_sizes.sizes("HEAD")
    assert sizes["import cycles"] == 0 and sizes["import-graph problems"] == 0
    assert sizes["module docstrings citing validation/"] == 0 and sizes["modules"] > 50
    assert house_sizes.main(["HEAD"]) == 0 and "| import cycles | 0 |" in capsys.readouterr().out
