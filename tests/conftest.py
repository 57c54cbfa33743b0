"""Shared fixtures: generated kernels are expensive, so they are built once per session."""

import os
import tempfile

import pytest

# pystencils must never write into the home directory during tests.
_CACHE = tempfile.mkdtemp(prefix="pystencils-perf-test-cache-")
os.environ["PYSTENCILS_CACHE_DIR"] = _CACHE


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
