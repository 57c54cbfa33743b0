"""Built-in plugins come from entry points; external plugins are honoured like them."""

import pytest
import sympy as sp

import pystencils_perf as pp
from pystencils_perf.hookspecs import hookimpl
from pystencils_perf.kernel import BDIM, BID, TID, Access, AccessKind, Field, KernelModel
from pystencils_perf.predict import Prediction


def test_builtins_are_registered_through_entry_points():
    pm = pp.get_plugin_manager()
    names = {name for name, _ in pm.list_name_plugin()}
    assert {"pystencils", "candidates", "estimator", "model", "select"} <= names
    dists = {dist.project_name for _, dist in pm.list_plugin_distinfo()}
    assert "pystencils-perf" in dists


class TupleKernel:
    """A foreign 'generator' kernel: one array, a copy kernel."""

    n = 4096


class TupleAdapter:
    @hookimpl
    def perf_harvest(self, kernel, options):
        if not isinstance(kernel, TupleKernel):
            return None
        gx = BID[0] * BDIM[0] + TID[0]
        fields = (Field("a", 8, (kernel.n,), (1,)), Field("b", 8, (kernel.n,), (1,)))
        accesses = (Access("a", AccessKind.LOAD, gx), Access("b", AccessKind.STORE, gx))
        return KernelModel("copy", fields, accesses, (kernel.n, 1, 1), kernel.n, domain=sp.Lt(gx, kernel.n))


class OnlyWideBlocks:
    @hookimpl
    def perf_check_candidate(self, model, launch, device):
        return "narrower than a warp" if launch.block[0] < 32 else None


class ConstantModel:
    @hookimpl
    def perf_models(self):
        return {"constant": "throughput = block width (a test model)"}

    @hookimpl
    def perf_predict(self, model, launch, device, metrics, options):
        if options.model != "constant":
            return None
        return Prediction(float(launch.block[0]), "constant", {"constant": 1.0 / launch.block[0]})


class NarrowFilter:
    @hookimpl
    def perf_prune_filters(self):
        return {"narrow": "drop blocks narrower than 64 threads in x"}

    @hookimpl
    def perf_prune(self, model, device, candidates, options):
        if "narrow" not in options.prune:
            return None
        return [(c, "pruned by narrow: x < 64") for c in candidates if c.launch.block[0] < 64]


class WarpCount:
    @hookimpl
    def perf_estimate_extras(self, model, launch, device, options, metrics):
        return {"warps_per_block": launch.threads_per_block / device.warp_size}


@pytest.fixture
def registered():
    pm = pp.get_plugin_manager()
    plugins = []

    def register(plugin):
        pm.register(plugin)
        plugins.append(plugin)

    yield register
    for p in plugins:
        pm.unregister(p)


def test_external_adapter_and_check_are_honoured(registered):
    registered(TupleAdapter())
    registered(OnlyWideBlocks())
    ranking = pp.rank(TupleKernel(), "V100", threads=1024)
    assert ranking.kernel == "copy"
    assert [c.launch.block for c in ranking.candidates] == [(1024, 1, 1)]
    assert not ranking.rejected  # a 1D kernel: only (1024, 1, 1) is generated
    ranking = pp.rank(TupleKernel(), "V100", blocks=[(16, 1, 1), (64, 1, 1)])
    assert [c.launch.block for c in ranking.candidates] == [(64, 1, 1)]
    assert ranking.rejected[0][1] == "narrower than a warp"
    # a copy kernel streams 8 B in and 8 B out per update
    m = ranking.best.metrics
    assert m.dram_load_bytes_per_lup == pytest.approx(8.0) and m.dram_store_bytes_per_lup == pytest.approx(8.0)


def test_model_plugins_are_opt_in_by_name(registered, jacobi_kernel):
    registered(ConstantModel())
    blocks = [(8, 4, 1), (64, 2, 1)]
    default = pp.rank(jacobi_kernel, "V100", blocks=blocks, folds=[(1, 1, 1)])
    assert default.best.prediction.limiter != "constant"  # installed is not chosen
    ranking = pp.rank(jacobi_kernel, "V100", blocks=blocks, folds=[(1, 1, 1)], model="constant")
    assert ranking.best.prediction.limiter == "constant"
    assert ranking.best.launch.block == (64, 2, 1)
    with pytest.raises(
        pp.ConfigurationError, match="unknown performance model .constnt.; installed: constant, .*limiters"
    ):
        pp.rank(jacobi_kernel, "V100", blocks=blocks, model="constnt")


def test_prune_filters_move_candidates_to_rejected_with_reason(registered, jacobi_kernel):
    registered(NarrowFilter())
    blocks = [(8, 4, 1), (64, 2, 1), (32, 1, 1)]
    assert len(pp.rank(jacobi_kernel, "V100", blocks=blocks, folds=[(1, 1, 1)]).candidates) == 3
    ranking = pp.rank(jacobi_kernel, "V100", blocks=blocks, folds=[(1, 1, 1)], prune="narrow")
    assert {c.launch.block for c in ranking.candidates} == {(64, 2, 1)}
    assert sorted((launch.block, reason) for launch, reason in ranking.rejected) == [
        ((8, 4, 1), "pruned by narrow: x < 64"),
        ((32, 1, 1), "pruned by narrow: x < 64"),
    ]
    with pytest.raises(pp.ConfigurationError, match="unknown candidate filter 'nope'"):
        pp.rank(jacobi_kernel, "V100", blocks=blocks, prune=("nope",))


def test_estimate_extras_reach_the_metrics(registered, jacobi_kernel):
    registered(WarpCount())
    ranking = pp.rank(jacobi_kernel, "V100", blocks=[(64, 2, 1)], folds=[(1, 1, 1)], model="limiters")
    assert ranking.best.metrics.extras == {"warps_per_block": 4.0}
    assert ranking.best.metrics.value("warps_per_block") == 4.0
    assert ranking.as_json()["candidates"][0]["metrics"]["warps_per_block"] == 4.0
    registered(WarpCount())
    with pytest.raises(pp.PerfError, match="two estimator plugins report warps_per_block"):
        pp.rank(jacobi_kernel, "V100", blocks=[(64, 2, 1)], folds=[(1, 1, 1)])


class Misspelt:
    @hookimpl
    def perf_predcit(self, model, launch, device, metrics, options):
        return None


def test_a_misspelt_hook_is_an_error(monkeypatch):
    from pystencils_perf import plugins

    monkeypatch.setattr(plugins, "_source_tree_builtins", lambda: {"misspelt": "tests.test_plugins_misspelt"})
    monkeypatch.setitem(__import__("sys").modules, "tests.test_plugins_misspelt", Misspelt())
    plugins._plugin_manager.cache_clear()
    try:
        with pytest.raises(pp.PerfError, match="perf_predcit"):
            plugins._plugin_manager(("test-block",))
    finally:
        plugins._plugin_manager.cache_clear()


def test_a_plugin_is_blocked_by_name(monkeypatch, jacobi_kernel):
    from pystencils_perf import plugins

    monkeypatch.setenv(plugins.BLOCK_ENV, "throughput")
    pm = plugins.get_plugin_manager()
    assert pm.is_blocked("throughput") and pm.get_plugin("throughput") is None
    with pytest.raises(
        pp.ConfigurationError, match="unknown performance model 'throughput'; installed: (?!.*throughput)"
    ):
        pp.rank(jacobi_kernel, "V100", blocks=[(64, 2, 1)])


def test_builtins_are_found_from_a_source_tree_without_installing():
    from pystencils_perf import plugins

    assert {"pystencils", "candidates", "estimator", "model", "select"} <= set(plugins._source_tree_builtins())


def test_every_registered_plugin_implements_a_hook():
    """A distribution either plugs something in or is a library that says so, with no entry point (issue 57:
    pystencils-perf-an5d registered one and implemented no hook)."""
    from importlib.metadata import entry_points

    from pystencils_perf.plugins import get_plugin_manager

    pm = get_plugin_manager()
    for entry in entry_points(group="pystencils_perf"):
        plugin = pm.get_plugin(entry.name)
        assert plugin is not None, entry.name
        assert pm.get_hookcallers(plugin), f"entry point {entry.name} ({entry.value}) implements no hook"
