"""Shared fixtures: generated kernels are expensive, so they are built once per session."""

import os
import tempfile

import pytest

# pystencils (and matplotlib's font cache) must never write into the home directory during tests,
# nor leave a folder in the temporary directory after them: this one is removed when the session ends.
_CACHE = tempfile.TemporaryDirectory(prefix="pystencils-perf-test-cache-")
os.environ["PYSTENCILS_CACHE_DIR"] = _CACHE.name
# nor the tuning records of `pystencils-perf tune` (a test of the command that does not name a folder of its own)
os.environ["PYSTENCILS_PERF_TUNING_DIR"] = os.path.join(_CACHE.name, "tuning")
os.environ.setdefault("MPLCONFIGDIR", os.path.join(_CACHE.name, "matplotlib"))
# hypothesis writes .hypothesis/ (its constants cache) into the directory pytest was started from
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(_CACHE.name, "hypothesis"))
# `create_kernel` keeps its estimates on disk: a test that patches the model must not be answered from another
# test's entry (tests/test_estimate_store.py switches it on where it tests it)
os.environ["PYSTENCILS_PERF_REMEMBER"] = "0"


def pytest_unconfigure(config):
    _CACHE.cleanup()


@pytest.fixture(scope="session")
def jacobi_kernel():
    from pystencils_perf.catalog import jacobi_2d

    return jacobi_2d((64, 64))


@pytest.fixture(scope="session")
def star_r4_kernel():
    from pystencils_perf.catalog import star_3d

    return star_3d(4, (640, 512, 512))


@pytest.fixture(scope="session")
def lbm_kernels():
    """The lbmpy kernels of the catalog, generated once (several seconds)."""
    from pystencils_perf.catalog import lbm

    domain = (32, 16, 8)
    return {
        "d3q19_srt": lbm.d3q19_srt(domain),
        "d3q27_cumulant": lbm.d3q27_cumulant(domain),
        "allen_cahn_phase_field": lbm.allen_cahn_phase_field(domain),
        "allen_cahn_hydro": lbm.allen_cahn_hydro(domain),
    }


V100_DATA = "validation/data/v100/v100_star3d_r2_1024_folding.csv"
V100_SPEC = "validation/data/v100/star3d_r2.py"


@pytest.fixture(scope="session")
def v100_validation():
    """The shared V100 star-stencil measurements against the authors' V100 coefficients (one ranking, seconds)."""
    from pystencils_perf.measure.dataset import read_dataset
    from pystencils_perf.spec import load_spec
    from pystencils_perf.validate import validate

    root = os.path.dirname(os.path.dirname(__file__))
    dataset = read_dataset(os.path.join(root, V100_DATA))
    return validate(dataset, load_spec(os.path.join(root, V100_SPEC)).kernel, "V100", align="interior")


#: interior points (x, y, z) of the folding tests: no fold divides them
ODD_DOMAIN = (13, 7, 5)


@pytest.fixture(scope="session")
def odd_domain_assignments():
    """Assignments on fixed-size fields of ODD_DOMAIN: the paper's two applications and D3Q19 SRT."""
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil, create_lb_update_rule

    from pystencils_perf.catalog import lbm, star_3d_assignments

    d3q19 = LBMConfig(stencil=LBStencil(Stencil.D3Q19), method=Method.SRT, relaxation_rate=1.8)
    return {
        "star3d_r4": star_3d_assignments(4, ODD_DOMAIN),
        "allen_cahn_phase_field": lbm.allen_cahn_phase_field_update_rule(ODD_DOMAIN),
        "d3q19_srt": create_lb_update_rule(lbm_config=d3q19, lbm_optimisation=LBMOptimisation(field_size=ODD_DOMAIN)),
    }


@pytest.fixture(scope="session")
def hip_d3q19_kernel():
    """lbmpy's D3Q19 SRT update chosen for one MI250X GCD (a HIP kernel), generated once (seconds)."""
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil

    from pystencils_perf.adapters.pystencils.lbm import create_lb_kernel

    return create_lb_kernel(
        LBMConfig(stencil=LBStencil(Stencil.D3Q19), method=Method.SRT, relaxation_rate=1.8),
        LBMOptimisation(field_size=(16, 8, 8)),
        device="MI250X", blocks=[(16, 8, 4), (16, 4, 8)], folds=[(1, 1, 1), (1, 1, 2)],
    )  # fmt: skip
