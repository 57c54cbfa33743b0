"""Maxwell and Pascal GP10x L1s cache only the loads that take the read-only path (`Device.global_loads_cached_in_l1`):
the other loads' requests all reach L2."""

from dataclasses import replace

import pytest

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-test-")

import pystencils as ps  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.devices import get_device, load_device_file  # noqa: E402
from pystencils_perf.errors import DeviceError  # noqa: E402
from pystencils_perf_cuda import Array, CudaKernel  # noqa: E402

N = 1024
BLOCK = (32, 4, 1)


def five_point(read_only: bool) -> CudaKernel:
    """A 5-point stencil on plain or ``__ldg`` pointers."""
    return CudaKernel(
        name="five-point",
        arrays=(Array("u", "float", (N * N,), read_only=read_only), Array("v", "float", (N * N,))),
        threads=(N, N),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        guard=f"x > 0 && x < {N - 1} && y > 0 && y < {N - 1}",
        loads=(
            f"u[y * {N} + x]",
            f"u[(y - 1) * {N} + x]",
            f"u[(y + 1) * {N} + x]",
            f"u[y * {N} + x - 1]",
            f"u[y * {N} + x + 1]",
        ),
        stores=(f"v[y * {N} + x]",),
    )


def metrics(kernel, device):
    return pp.rank(kernel, device, blocks=[BLOCK], folds=[(1, 1, 1)]).candidates[0].metrics


@pytest.fixture(scope="module")
def devices():
    caching = get_device("V100")
    return caching, replace(caching, global_loads_cached_in_l1=0)


def test_plain_loads_reach_l2_whole_where_the_l1_caches_only_the_read_only_path(devices):
    caching, read_only_only = devices
    cached, uncached = metrics(five_point(False), caching), metrics(five_point(False), read_only_only)
    assert uncached.l2_load_bytes_per_lup == pytest.approx(uncached.l1_requested_bytes_per_lup)
    assert uncached.l2_load_bytes_per_lup > 2 * cached.l2_load_bytes_per_lup
    assert uncached.l1_requested_bytes_per_lup == cached.l1_requested_bytes_per_lup


def test_ldg_loads_are_cached_either_way(devices):
    caching, read_only_only = devices
    assert metrics(five_point(True), read_only_only).l2_load_bytes_per_lup == pytest.approx(
        metrics(five_point(True), caching).l2_load_bytes_per_lup
    )


def test_fields_pystencils_only_reads_take_the_read_only_path(devices):
    """pystencils passes a field it only reads as a const restrict pointer, which nvcc loads through that path."""
    src, dst = ps.fields("src, dst: float[2D]", layout="c")
    kernel = pp.harvest(
        ps.create_kernel(
            ps.Assignment(dst[0, 0], src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]),
            ps.CreateKernelConfig(target=ps.Target.CUDA),
        ),
        domain_shape=(N, N),
    )
    assert kernel.loads_through_read_only_path() == {"src"}
    caching, read_only_only = devices
    assert metrics(kernel, read_only_only).l2_load_bytes_per_lup == pytest.approx(
        metrics(kernel, caching).l2_load_bytes_per_lup
    )


def test_the_flag_is_zero_or_one(tmp_path):
    text = open(get_device("GTX-1080-Ti").path).read()
    assert (
        get_device("GTX-1080-Ti").global_loads_cached_in_l1 == 0 and get_device("V100").global_loads_cached_in_l1 == 1
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("[global_loads_cached_in_l1]\nvalue = 0", "[global_loads_cached_in_l1]\nvalue = 2"))
    with pytest.raises(DeviceError, match="'global_loads_cached_in_l1' must be 0 or 1, got 2"):
        load_device_file(bad)
