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
    @hookimpl(tryfirst=True)
    def perf_predict(self, model, launch, device, metrics):
        return Prediction(float(launch.block[0]), "constant", {"constant": 1.0 / launch.block[0]})


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
    assert m["dram_load_bytes_per_lup"] == pytest.approx(8.0) and m["dram_store_bytes_per_lup"] == pytest.approx(8.0)


def test_external_model_takes_precedence(registered, jacobi_kernel):
    registered(ConstantModel())
    ranking = pp.rank(jacobi_kernel, "V100", blocks=[(8, 4, 1), (64, 2, 1)], folds=[(1, 1, 1)])
    assert ranking.best.prediction.limiter == "constant"
    assert ranking.best.launch.block == (64, 2, 1)
