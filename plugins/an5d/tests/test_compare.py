"""compare(): AN5D's best against pystencils_perf.rank's best, on the paper's 2D problem size."""

import dataclasses

import pystencils as ps
import pystencils_perf
import pytest

from pystencils_perf_an5d import An5dDeviceError, compare, search

WEIGHTS = (0.4, 0.11, 0.12, 0.13, 0.14)


def star2d_assignments():
    src, dst = ps.fields("src, dst: float32[16386, 16386]")
    neighbours = (src[0, 0], src[1, 0], src[-1, 0], src[0, 1], src[0, -1])
    return [ps.Assignment(dst[0, 0], sum(w * n for w, n in zip(WEIGHTS, neighbours)))]


@pytest.fixture(scope="module")
def comparison():
    return compare(star2d_assignments(), "V100")


def test_an5d_side_is_the_search_best(comparison):
    assert comparison.device == "V100-PCIe-32GB"
    assert comparison.problem.size == 16384
    assert comparison.problem.stencil.flops_per_cell == 9
    assert comparison.an5d == search(comparison.problem, "V100")[0]


def test_rank_side_is_ranks_best_in_gflops(comparison):
    best = pystencils_perf.rank(star2d_assignments(), "V100").best
    assert comparison.rank_glups == best.prediction.glups
    assert comparison.rank_block == tuple(best.launch.block)
    assert comparison.rank_gflops == pytest.approx(best.prediction.glups * 9)
    assert comparison.speedup == pytest.approx(comparison.an5d.gflops / comparison.rank_gflops)


def test_report_says_whether_temporal_blocking_pays(comparison):
    report = comparison.report()
    assert comparison.speedup > 1  # a radius-1 star is memory-bound without temporal blocking
    assert f"temporal blocking would pay x{comparison.speedup:.1f}" in report
    assert "AN5D best     bT=" in report and "rank best     block" in report


def test_device_without_an5d_data_fails_before_ranking():
    with pytest.raises(An5dDeviceError, match="no AN5D device data for 'H100'"):
        compare(star2d_assignments(), "H100")


def test_report_when_temporal_blocking_would_not_pay(comparison):
    faster_without = dataclasses.replace(comparison, rank_glups=comparison.rank_glups * 100)
    assert faster_without.speedup < 1
    assert f"temporal blocking would not pay (x{faster_without.speedup:.2f})" in faster_without.report()
