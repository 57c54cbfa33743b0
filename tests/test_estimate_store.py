"""The estimates `create_kernel` keeps on disk (`estimate_store`): reused only for the same kernel, device, options,
plugins and code, and never in the way of a ranking when the store cannot be read or written."""

import importlib
import os
import sys

import pluggy
import pytest

import pystencils_perf as pp
from pystencils_perf import estimate_store
from pystencils_perf.devices import get_device
from pystencils_perf.launch import LaunchConfig, RankOptions
from pystencils_perf.plugins import get_plugin_manager

rank_module = importlib.import_module("pystencils_perf.rank")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(estimate_store.REMEMBER_ENV, "1")
    return tmp_path / "cache" / "pystencils-perf" / "estimates"


def _summary(ranking):
    return [(c.launch, c.prediction, c.metrics) for c in ranking.candidates], ranking.pick.launch


def test_the_second_ranking_is_read_from_the_store_and_is_the_same(store, jacobi_kernel, monkeypatch):
    first = pp.rank(jacobi_kernel, "V100", remember=True, jobs=1)
    assert len(list(store.glob("*.pickle"))) == 1

    def not_again(*args):
        raise AssertionError("estimated again although the store holds the estimates")

    monkeypatch.setattr(rank_module, "_estimate_all", not_again)
    assert _summary(pp.rank(jacobi_kernel, "V100", remember=True, jobs=1)) == _summary(first)
    with pytest.raises(AssertionError, match="estimated again"):  # another device is another entry
        pp.rank(jacobi_kernel, "A100", remember=True, jobs=1)


def test_a_ranking_that_does_not_remember_leaves_the_store_alone(store, jacobi_kernel):
    pp.rank(jacobi_kernel, "V100", jobs=1)
    assert not store.exists()


def _context(pm, device="V100", options=RankOptions()):
    return (pm, {}, [LaunchConfig((32, 4, 1))], get_device(device), options)


def test_the_key_changes_with_device_options_and_plugin_code(tmp_path, monkeypatch):
    package = tmp_path / "perf_store_probe"
    package.mkdir()
    (package / "__init__.py").write_text("'''a plugin package for the key test'''\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("perf_store_probe")
    pm = pluggy.PluginManager("pystencils_perf")
    pm.register(sys.modules["pystencils_perf.estimate.plugin"])
    pm.register(module)
    key = estimate_store.entry_key(_context(pm))
    assert estimate_store.entry_key(_context(pm)) == key
    assert estimate_store.entry_key(_context(pm, device="A100")) != key
    assert estimate_store.entry_key(_context(pm, options=RankOptions(model="limiters"))) != key
    stat = (package / "__init__.py").stat()
    os.utime(package / "__init__.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the plugin edited
    assert estimate_store.entry_key(_context(pm)) != key
    pm.unregister(module)  # a plugin fewer
    assert estimate_store.entry_key(_context(pm)) != key


def test_an_unreadable_entry_is_estimated_again_and_replaced(store):
    context = _context(get_plugin_manager())
    calls = []

    def estimate():
        calls.append(1)
        return ["estimates"]

    assert estimate_store.remembered(context, estimate) == ["estimates"]
    (entry,) = store.glob("*.pickle")
    entry.write_bytes(entry.read_bytes()[:-5])  # cut short, as by a crash while another process wrote it
    assert estimate_store.remembered(context, estimate) == ["estimates"]
    assert estimate_store.remembered(context, estimate) == ["estimates"]
    assert len(calls) == 2  # the third call read what the second wrote
    entry.write_bytes(b"not an entry")
    assert estimate_store.remembered(context, estimate) == ["estimates"] and len(calls) == 3


def test_the_environment_switches_the_store_off(store, monkeypatch):
    monkeypatch.setenv(estimate_store.REMEMBER_ENV, "0")
    calls = []
    for _ in range(2):
        estimate_store.remembered(_context(get_plugin_manager()), lambda: calls.append(1) or ["estimates"])
    assert len(calls) == 2 and not store.exists()


def test_a_cache_folder_that_takes_no_files_keeps_none(tmp_path, monkeypatch):
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(blocked))
    monkeypatch.setenv(estimate_store.REMEMBER_ENV, "1")
    assert estimate_store.remembered(_context(get_plugin_manager()), lambda: ["estimates"]) == ["estimates"]
