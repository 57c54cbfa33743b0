"""The opt-in throughput model: request counts derived by hand, the combination, opt-in, device data."""

import math
import shutil
import subprocess
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from pystencils_perf_cuda import Array, CudaKernel

import pystencils_perf as pp
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.models import throughput

N = 4096  # a row of 4096 floats is 128 lines of 128 B: every row starts a line


def _copy(load="a[y][x]", read_only=False):
    return CudaKernel(
        name="copy",
        arrays=(Array("a", "float", (N, N + 32), read_only=read_only), Array("b", "float", (N, N + 32))),
        threads=(N, N),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        loads=(load,),
        stores=("b[y][x]",),
        flops_per_lup=2.0,
    )


@pytest.fixture(scope="module")
def a100():
    return pp.get_device("A100-PCIe-40GB")


@pytest.mark.parametrize(
    "load, block, lines_per_request, passes_per_request",
    [
        ("a[y][x]", (32, 4, 1), 1, 1),  # a warp's 32 floats fill one aligned 128-B line
        ("a[y][x + 1]", (32, 4, 1), 2, 1),  # shifted by one float: the warp straddles two lines
        ("a[y][x]", (16, 8, 1), 2, 1),  # a 16-wide block: one warp spans two rows, two lines
        ("a[y][x]", (4, 32, 1), 8, 2),  # 8 rows of 4 floats: 8 lines, 4 per tag-stage pass
        ("a[y][x + 1]", (2, 64, 1), 16, 4),
    ],
)
def test_tag_lookups_are_distinct_lines_per_warp_request(a100, load, block, lines_per_request, passes_per_request):
    model = pp.harvest(_copy(load))
    counts = throughput.request_counts(model, LaunchConfig(block), a100, tag_lookups_per_pass=4)
    assert counts["load_requests_per_lup"] == pytest.approx(1 / 32)  # one load per update, one request per warp
    assert counts["l1_tag_lookups_per_lup"] == pytest.approx(lines_per_request / 32)
    assert counts["l1_tag_passes_per_lup"] == pytest.approx(passes_per_request / 32)
    assert counts["read_only_load_requests_per_lup"] == 0
    # a load, a store and one FMA (2 flops) per thread: three warp instructions per 32 updates
    assert counts["warp_instructions_per_lup"] == pytest.approx(3 / 32)


@pytest.mark.parametrize(
    "load, block, a100_cycles, ga10x_cycles",
    [
        ("a[y][x]", (32, 4, 1), 1, 2),  # one line: a pass on the A100; the GA10x L1 takes a request per 2 cycles
        ("a[y][x + 1]", (32, 4, 1), 1, 2),  # two lines, still one pass
        ("a[y][x]", (4, 32, 1), 2, 2),  # 8 lines: two passes, which the request's 2 cycles cover
        ("a[y][x + 1]", (2, 64, 1), 4, 4),
    ],
)
def test_a_ga10x_l1_request_takes_two_cycles_at_least(a100, load, block, a100_cycles, ga10x_cycles):
    """gpu-strides on an A40 measures max(2 cycles, the A100's) per warp request, at every stride and block width."""
    model = pp.harvest(_copy(load))
    for device, cycles in ((a100, a100_cycles), (pp.get_device("RTX-A4000"), ga10x_cycles)):
        x = throughput.request_counts(model, LaunchConfig(block), device, tag_lookups_per_pass=4)
        assert throughput.l1_request_stage_cycles_per_lup(x, device) == pytest.approx(cycles / 32)


@pytest.mark.parametrize(
    "block, sectors_per_line, store_lines_per_request",
    [
        ((32, 4, 1), 4, 1),  # 32 floats: one line of four sectors per warp load and store
        ((8, 16, 1), 1, 4),  # 4 rows of 8 floats: four lines of one sector each
        ((1, 128, 1), 1, 32),  # every lane its own line
    ],
)
def test_l2_requests_are_lines_with_the_sectors_a_warp_wants(block, sectors_per_line, store_lines_per_request):
    """What misses L1 reaches L2 as one request per line; stores write through, one request per line they touch.
    On Hopper, where it was measured, a load request of one 32-B sector costs an L2 request slot of 63.5 B all the
    same, a store request 139.3 B, and a stored byte 1.98 loaded bytes."""
    h100 = pp.get_device("H100")
    kernel = _copy()
    model = pp.harvest(kernel)
    counts = throughput.request_counts(model, LaunchConfig(block), h100, tag_lookups_per_pass=4)
    assert counts["load_sectors_per_line"] == pytest.approx(sectors_per_line)
    assert counts["store_lines_per_lup"] == pytest.approx(store_lines_per_request / 32)
    best = pp.rank(kernel, h100, blocks=[block], folds=[(1, 1, 1)], model="throughput").best
    metrics = best.metrics
    load_requests = metrics.l2_load_bytes_per_lup / (32 * sectors_per_line)
    assert metrics.extras["l2_load_requests_per_lup"] == pytest.approx(load_requests)
    assert metrics.extras["l2_store_requests_per_lup"] == pytest.approx(store_lines_per_request / 32)
    by_bytes = (metrics.l2_load_bytes_per_lup + 1.98 * metrics.l2_store_bytes_per_lup) / (h100.l2_bandwidth_gbs * 1e9)
    by_requests = (load_requests * 63.5 + store_lines_per_request / 32 * 139.3) / (h100.l2_bandwidth_gbs * 1e9)
    assert best.prediction.seconds_per_lup["L2"] == pytest.approx(max(by_bytes, by_requests))
    assert (by_requests > by_bytes) == (sectors_per_line == 1)  # one-sector requests: the slots, not the bytes


def test_the_l2_request_slots_and_store_cost_are_measured_on_hopper_only():
    """Elsewhere a request costs its sectors and a stored byte a loaded byte's worth: the V100's measured stencil
    runs stay DRAM-bound, as in the paper."""
    for name in ("H200", "GH200", "H100"):
        c = throughput.constants_for(pp.get_device(name))
        assert (c.l2_bytes_per_request, c.l2_bytes_per_store_request, c.l2_load_bytes_per_store_byte) == (
            63.5,
            139.3,
            1.98,
        )
    for name in ("V100", "A100-PCIe-40GB", "RTX-A4000", "MI250X"):
        c = throughput.constants_for(pp.get_device(name))
        assert (c.l2_bytes_per_request, c.l2_bytes_per_store_request, c.l2_load_bytes_per_store_byte) == (32, 32, 1.0)


def _stores(count, shift):
    """A kernel that stores `count` arrays, each `shift` floats off its lines."""
    arrays = tuple(Array(f"b{k}", "float", (N, N + 32)) for k in range(count))
    return CudaKernel(
        name="fill",
        arrays=(Array("a", "float", (N, N + 32)), *arrays),
        threads=(N, N),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        loads=("a[y][x]",),
        stores=tuple(f"b{k}[y][x + {shift}]" for k in range(count)),
        flops_per_lup=0.0,
    )


@pytest.mark.parametrize("block", [(32, 4, 1), (8, 16, 1), (1, 128, 1)])
def test_on_hopper_the_load_requests_that_miss_l2_take_dram_bandwidth(block):
    """A copy streams through DRAM: every load request misses L2. On Hopper each takes at least
    `dram_bytes_per_request` of DRAM bandwidth, so narrow blocks, whose warps split the rows into short runs, are
    priced for their requests; its stores are on their lines and cost their bytes. Elsewhere DRAM's time is its
    bytes alone."""
    kernel = _copy()
    for name, per_request in (("H100", 105.5), ("A100-PCIe-40GB", 0.0)):
        device = pp.get_device(name)
        best = pp.rank(kernel, device, blocks=[block], folds=[(1, 1, 1)], model="throughput").best
        metrics, x = best.metrics, best.metrics.extras
        assert throughput.constants_for(device).dram_bytes_per_request == per_request
        # a warp's 128 B of stores fill one line's worth: 2, 4 or 32 lines written, 0, 3 or 31 of them in part
        assert x["partly_stored_lines_per_lup"] == {(32, 4, 1): 0.0, (8, 16, 1): 3 / 32, (1, 128, 1): 31 / 32}[block]
        missing = x["l2_load_requests_per_lup"] * min(
            metrics.dram_load_bytes_per_lup / metrics.l2_load_bytes_per_lup, 1
        )
        loads = max(metrics.dram_load_bytes_per_lup, missing * per_request)
        partly = x["partly_stored_lines_per_lup"] * (3.0 if name == "H100" else 0.0)
        expected = (loads + metrics.dram_store_bytes_per_lup + partly) / (device.dram_bandwidth_gbs * 1e9)
        assert best.prediction.seconds_per_lup["DRAM"] == pytest.approx(expected)
        assert (loads > metrics.dram_load_bytes_per_lup) == (name == "H100" and block != (32, 4, 1))  # 128-B rows


def test_on_hopper_a_line_stored_in_part_costs_dram_by_the_fields_a_thread_stores():
    """A warp's 32 floats a float off their lines write two lines, one of them in part: 1/32 line per update and
    store. On the H100, at 64 warps per SM, such a line costs 3 B more with one field stored per point and 129 B
    with 19 (the microbenchmark's copies); on lines, or on other GPUs, stores cost their bytes."""
    h100, a100 = pp.get_device("H100"), pp.get_device("A100-PCIe-40GB")
    for count, extra in ((1, 3.0), (19, 129.0)):
        for shift in (0, 1):
            for device in (h100, a100):
                best = pp.rank(
                    _stores(count, shift), device, blocks=[(32, 4, 1)], folds=[(1, 1, 1)], model="throughput"
                ).best
                metrics, x = best.metrics, best.metrics.extras
                assert (x["stores_per_update"], x["resident_warps_per_sm"]) == (count, 64)
                assert x["partly_stored_lines_per_lup"] == pytest.approx(count * shift / 32)
                dram_bytes = best.prediction.seconds_per_lup["DRAM"] * device.dram_bandwidth_gbs * 1e9
                beyond = x["partly_stored_lines_per_lup"] * extra if device is h100 else 0.0
                assert dram_bytes == pytest.approx(
                    metrics.dram_load_bytes_per_lup + metrics.dram_store_bytes_per_lup + beyond
                )
    c = throughput.constants_for(h100)
    assert throughput.dram_bytes_per_partly_stored_line(640, c) == pytest.approx(89 + 30 / 2)  # between 448 and 832
    assert throughput.dram_bytes_per_partly_stored_line(3456, c) == 147.0  # held past the last
    for name in ("GH200", "H100-PCIe-80GB"):  # unmeasured GH100 GPUs borrow the H100's table; the H200 has its own
        assert (
            throughput.constants_for(pp.get_device(name)).dram_bytes_per_partly_stored_line
            == c.dram_bytes_per_partly_stored_line
        )


def test_hopper_partly_stored_line_cost_is_the_microbenchmarks_output():
    """`dram_bytes_per_partly_stored_line` at 64 f warp stores in flight is 512 (r - 1) for copies of f fields
    (64 warps per SM) whose stores sit a double off their lines and take r times as long as on them (f/32 such
    lines per cell against 16 f bytes moved), the mean of the two committed runs: the H100's, and the H200's own."""
    import json

    data = Path(__file__).resolve().parents[1] / "validation" / "hopper" / "data"
    for name, folder in (("H100", data / "h100"), ("H200", data)):
        runs = [
            json.loads((folder / f).read_text())["field_count_rates"]
            for f in ("field_count_rates.json", "field_count_rates_rerun.json")
        ]
        table = dict(throughput.constants_for(pp.get_device(name)).dram_bytes_per_partly_stored_line)
        assert sorted(table) == [64 * f for f in (1, 2, 4, 7, 13, 19, 27)]
        for in_flight, cost in table.items():
            fields = in_flight // 64
            extra = [
                512 * (r[f"copy_{fields}_shift_00"]["bytes_per_s"] / r[f"copy_{fields}_shift_01"]["bytes_per_s"] - 1)
                for r in runs
            ]
            assert round(sum(extra) / 2) == cost, (name, fields)


def test_the_hopper_gpus_share_the_h100s_fit():
    """The GH100 SM's three fitted constants come from the H100's tile-1x1 convolution rows; the other Hopper GPUs
    borrow them (and say so), while the AD10x L40 keeps the default, the A100's."""
    table = throughput._table()["devices"]
    fit = throughput._values(table["H100-SXM5-80GB"]["fit"])
    assert "validate_gpus.py --fit" in table["H100-SXM5-80GB"]["fit"]["data"]
    for name in ("H100", "H100-PCIe-80GB", "H200", "GH200"):
        c = throughput.constants_for(pp.get_device(name))
        assert (
            c.overlap_exponent,
            c.read_only_tag_passes_per_cycle,
            c.guarded_read_only_tag_passes_per_cycle,
            c.mape_on_fitted_rows,
        ) == (
            fit["overlap_exponent"],
            fit["read_only_tag_passes_per_cycle"],
            fit["guarded_read_only_tag_passes_per_cycle"],
            fit["mape_on_fitted_rows"],
        ), name
        assert name == "H100" or c.fitted_on.startswith("borrowed from H100-SXM5-80GB")
    a100 = throughput._values(table["A100-PCIe-40GB"]["fit"])
    assert throughput.constants_for(pp.get_device("L40")).overlap_exponent == a100["overlap_exponent"]


def test_hopper_dram_request_cost_is_the_microbenchmarks_output():
    """`dram_bytes_per_request` is the H100's DRAM bandwidth over the rate of requests a copy of random 64-B runs
    makes (one load and one store request per run), recomputed from the committed JSON; the H200 borrows it."""
    import json

    run = json.loads(
        (
            Path(__file__).resolve().parents[1]
            / "validation"
            / "hopper"
            / "data"
            / "h100"
            / "microbench_dram_runs.json"
        ).read_text()
    )["dram_run_rates"]
    requests_per_s = 2 * run["copy_run_64B"]["runs_per_s"]
    h100 = pp.get_device("H100")
    assert (
        round(h100.dram_bandwidth_gbs * 1e9 / requests_per_s, 1)
        == throughput.constants_for(h100).dram_bytes_per_request
    )
    assert throughput.constants_for(pp.get_device("H200")).dram_bytes_per_request == 105.5
    for name in ("V100", "RTX-A4000", "MI250X", "Radeon-PRO-W6600"):
        assert throughput.constants_for(pp.get_device(name)).dram_bytes_per_request == 0.0


def test_hopper_l2_figures_are_the_microbenchmarks_output():
    """The store costs and the H200/H100 L2 bandwidth are what `validation/hopper/microbench.py` measured, recomputed
    from its committed JSON (each ratio within one run), not numbers typed in."""
    import json
    import statistics

    data = Path(__file__).resolve().parents[1] / "validation" / "hopper" / "data"

    def store_costs(path):
        run = json.loads(path.read_text())
        loads_bytes_per_s = run["l2_read_gbs"] * 1e9
        stores = run["l2_store_rates"]
        one_sector = (stores["stride_128B"]["requests_per_s"] + stores["stride_256B"]["requests_per_s"]) / 2
        return loads_bytes_per_s / one_sector, loads_bytes_per_s / (8 * stores["stride_8B"]["stores_per_s"])

    c = throughput.constants_for(pp.get_device("H200"))
    slot, per_byte = store_costs(data / "microbench_stores.json")
    assert (round(slot, 1), round(per_byte, 2)) == (c.l2_bytes_per_store_request, c.l2_load_bytes_per_store_byte)
    slot_h100, per_byte_h100 = store_costs(data / "h100" / "microbench_stores.json")  # the same GH100 L2
    assert abs(slot_h100 / slot - 1) < 0.05 and abs(per_byte_h100 / per_byte - 1) < 0.05
    h200_runs = [json.loads(f.read_text())["l2_read_gbs"] for f in data.glob("microbench*.json")]
    assert len(h200_runs) == 4  # four leases' read loops: their median
    assert pp.get_device("H200").l2_bandwidth_gbs == round(statistics.median(h200_runs), 1)
    h100_run = json.loads((data / "h100" / "microbench.json").read_text())["l2_read_gbs"]
    assert pp.get_device("H100").l2_bandwidth_gbs == round(h100_run, 1)


def test_hopper_block_start_rate_is_the_microbenchmarks_output():
    """`cycles_per_block_start` is what `validation/hopper/block_life.py` measured for its Jacobi sweep in blocks of
    64 x 1 threads, one point each (4194304 blocks), at the clock its warps' records give, recomputed from the
    committed JSONs of the H100 and the H200; other GPUs have none."""
    import json

    data = Path(__file__).resolve().parents[1] / "validation" / "hopper" / "data"
    for name, path in (("H100", data / "h100" / "block_life.json"), ("H200", data / "block_life.json")):
        run = json.loads(path.read_text())
        (launch,) = [r for r in run["launches"] if r["kernel"] == "jacobi" and r["block"] == [64, 1] and r["fold"] == 1]
        clock_hz = launch["sm_span_cycles_mean"] / (launch["instrumented_ms"] * 1e-3)
        cycles = launch["ms"] * 1e-3 * clock_hz * run["sm_count"] / ((16384 // 64) * 16384)
        assert abs(cycles / throughput.constants_for(pp.get_device(name)).cycles_per_block_start - 1) < 0.01
        assert launch["live_warps_per_sm"] < 20 and launch["occupancy_blocks_per_sm"] == 32  # 64 warps allowed
    for name in ("V100", "A100-PCIe-40GB", "RTX-A4000", "MI250X"):
        assert throughput.constants_for(pp.get_device(name)).cycles_per_block_start == 0.0


@pytest.mark.parametrize(
    "block, fold", [((64, 1, 1), (1, 1, 1)), ((64, 1, 1), (1, 2, 1)), ((32, 1, 1), (1, 1, 1)), ((256, 1, 1), (1, 1, 1))]
)
def test_an_sm_starts_blocks_at_its_measured_rate(block, fold):
    """Blocks of few threads, one point each, are limited by how often an SM starts a block (Hopper: every 157
    cycles): the term is the blocks per update times that, over the SMs' cycles, and it bounds the time from below
    (the block scheduler works while the warps run). Folding halves it; a device without the figure has no term."""
    kernel = _copy()
    h100 = pp.get_device("H100")
    best = pp.rank(kernel, h100, blocks=[block], folds=[fold], model="throughput").best
    points_per_block = math.prod(block) * math.prod(fold)
    expected = 157.0 / points_per_block / (h100.sm_count * h100.clock_ghz * 1e9)
    named = best.prediction.seconds_per_lup
    assert named["block starts"] == pytest.approx(expected)
    assert 1 / (best.prediction.glups * 1e9) >= expected * (1 - 1e-9)
    if points_per_block <= 64:  # a float copy's 8 B per point: a 64-point block's DRAM time is under 50 cycles
        assert best.prediction.limiter == "block starts"
    a100 = pp.rank(kernel, pp.get_device("A100-PCIe-40GB"), blocks=[block], folds=[fold], model="throughput").best
    assert "block starts" not in a100.prediction.seconds_per_lup


def test_a_warp_issues_for_all_its_lanes(a100):
    """A 48-thread block runs two warps, the second half idle: 2 requests and 2 FMAs per 48 updates, not 1.5, and
    FP time grows by 64 / 48; the same threads in 64-wide blocks fill their warps."""
    width = 48 * 64  # every block of 48 or 64 threads lies inside the domain
    kernel = CudaKernel(
        name="copy",
        arrays=(Array("a", "float", (64, width)), Array("b", "float", (64, width))),
        threads=(width, 64),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "blockIdx.y * blockDim.y + threadIdx.y"},
        loads=("a[y][x]",),
        stores=("b[y][x]",),
        flops_per_lup=2.0,
    )
    counts = throughput.request_counts(pp.harvest(kernel), LaunchConfig((48, 1, 1)), a100, tag_lookups_per_pass=4)
    assert counts["load_requests_per_lup"] == pytest.approx(2 / 48)
    assert counts["warp_instructions_per_lup"] == pytest.approx(3 * 2 / 48)  # load, store, FMA in each warp
    assert counts["point_lane_utilization"] == pytest.approx(48 / 64)
    terms = {
        bx: pp.rank(
            kernel, a100, blocks=[(bx, 1, 1)], folds=[(1, 1, 1)], model="throughput"
        ).best.prediction.seconds_per_lup["FP"]
        for bx in (48, 64)
    }
    assert terms[48] == pytest.approx(terms[64] * 64 / 48)


def test_read_only_arrays_are_counted_apart(a100):
    counts = throughput.request_counts(
        pp.harvest(_copy("a[y][x + 1]", read_only=True)), LaunchConfig((32, 4, 1)), a100, 4
    )
    assert counts["load_requests_per_lup"] == 0 and counts["l1_tag_lookups_per_lup"] == 0
    assert counts["read_only_l1_tag_lookups_per_lup"] == pytest.approx(2 / 32)
    assert counts["read_only_l1_tag_passes_per_lup"] == pytest.approx(1 / 32) and counts["l1_tag_passes_per_lup"] == 0


def test_overlap_exponent_spans_max_to_sum_and_pipeline_stages_take_the_slower():
    times = {"a": 1.0, "b": 1.0, "c": 0.5}
    assert throughput.overlapped_seconds(times, 1.0) == pytest.approx(2.5)  # p = 1: no overlap, a sum
    assert throughput.overlapped_seconds(times, 200.0) == pytest.approx(1.0, rel=0.01)  # p large: the max
    # the L1 tag and data stages are one pipeline: the slower stage counts, then the sum (p = 1) with the rest
    assert throughput.overlapped_seconds({"L1 tags": 1.0, "L1 banks": 0.5, "FP": 1.0}, 1.0) == pytest.approx(2.0)
    assert throughput.overlapped_seconds({"L1 banks": 0.5, "FP": 1.0}, 1.0) == pytest.approx(1.5)
    # issue and FP are stages of one dispatch (an FMA is counted by both): the slower counts
    assert throughput.overlapped_seconds({"FP": 1.0, "issue": 1.5, "latency": 1.0}, 1.0) == pytest.approx(2.5)
    assert throughput.overlapped_seconds({"FP": 2.0, "issue": 1.5, "L1 banks": 1.0}, 1.0) == pytest.approx(3.0)
    # L2 and DRAM overlap fully with the SM's units: the larger of them and the SM's power mean
    assert throughput.overlapped_seconds({"FP": 1.0, "latency": 1.0, "DRAM": 1.5}, 1.0) == pytest.approx(2.0)
    assert throughput.overlapped_seconds({"FP": 1.0, "latency": 1.0, "DRAM": 3.0, "L2": 2.5}, 1.0) == pytest.approx(3.0)


def _row_copy(blocks: int):
    """A one-row copy in `blocks` blocks of 32 threads (A100: 32 such blocks per SM, 3456 in a full wave)."""
    width = 32 * blocks
    return CudaKernel(
        name="row",
        arrays=(Array("a", "float", (1, width)), Array("b", "float", (1, width))),
        threads=(width, 1),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": "0"},
        loads=("a[y][x]",),
        stores=("b[y][x]",),
        flops_per_lup=2.0,
    )


@pytest.mark.parametrize(
    "blocks, waves, last_wave_blocks_per_sm, tail_share_without_latency",
    [
        (3456 * 2, 2.0, 0, 0.0),  # two full waves: no tail
        (3456 * 3 // 2, 1.5, 16, 0.0),  # half a wave more: 16 blocks on every SM, each at the same rate
        (54, 54 / 3456, 1, 1.0),  # 54 blocks on 108 SMs: half of them idle, twice the time
    ],
)
def test_the_last_wave_costs_the_blocks_it_puts_on_the_busiest_sm(
    a100, blocks, waves, last_wave_blocks_per_sm, tail_share_without_latency
):
    """Without latency (loads in flight without bound) only the busiest SM's share of blocks sets the tail; with
    latency, an SM holding fewer blocks hides less of it, so the tail grows where latency is not hidden behind
    DRAM, but a partly filled last wave never costs more than a full one."""
    kernel = _row_copy(blocks)
    m = pp.rank(kernel, a100, blocks=[(32, 1, 1)], folds=[(1, 1, 1)], model="throughput").best.metrics
    assert (m.blocks_per_sm, m.extras["waves"], m.extras["last_wave_blocks_per_sm"]) == (
        32,
        pytest.approx(waves),
        last_wave_blocks_per_sm,
    )
    c = throughput.constants_for(a100)
    total, named = throughput.predict_seconds(pp.harvest(kernel), a100, m, replace(c, loads_in_flight_per_warp=1e12))
    assert named["tail"] == pytest.approx(tail_share_without_latency * (total - named["tail"]), abs=1e-18)
    total, named = throughput.predict_seconds(pp.harvest(kernel), a100, m, c)
    full = total - named["tail"]
    if last_wave_blocks_per_sm:
        whole_last_wave = full * (math.floor(waves) + 1) / waves  # the last wave as long as a full one
        assert full * (1 + tail_share_without_latency) <= total <= whole_last_wave
    else:
        assert named["tail"] == 0


def test_what_misses_l2_waits_in_the_memory_queue_as_long_as_its_utilization_says(a100):
    """A copy of two full waves streams through DRAM: its L2 misses wait in DRAM's queue, their latency beyond L2
    1 / (1 - u) times the unloaded one at the utilization u = DRAM time / total time, and the total is the fixed
    point: the terms with that latency combine to it. Slower than the unloaded prediction, never faster."""
    kernel = _row_copy(3456 * 2)
    m = pp.rank(kernel, a100, blocks=[(32, 1, 1)], folds=[(1, 1, 1)]).best.metrics
    c = throughput.constants_for(a100)
    unloaded = throughput.term_times(pp.harvest(kernel), a100, m, c)
    total, named = throughput.predict_seconds(pp.harvest(kernel), a100, m, c)
    assert named["tail"] == 0
    utilization = named["DRAM"] / total
    assert 0.5 < utilization < 1
    queueing = throughput.mean_latency_cycles(m, c, utilization) / throughput.mean_latency_cycles(m, c)
    assert queueing > 1.5
    assert named["latency"] == pytest.approx(unloaded["latency"] * queueing, rel=1e-9)
    terms = {k: v for k, v in named.items() if k not in ("overlap", "tail")}
    assert throughput.overlapped_seconds(terms, c.overlap_exponent) == pytest.approx(total, rel=1e-9)
    assert total > throughput.overlapped_seconds(unloaded, c.overlap_exponent)


def test_a_barrier_leaves_a_share_of_the_copys_latency_exposed(a100):
    """A kernel that stages its input in shared memory waits at a barrier for its copy: the latency term over
    the blocks resident per SM is added past every overlap. A kernel without shared stores has no barrier."""
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    spec = load_tunable_spec(Path(__file__).parents[1] / "validation/rtx2080ti_convolution/convolution_shmem.py")
    kernel = spec.kernel_for({"TILE_SIZE_X": 1, "TILE_SIZE_Y": 2, "READ_ONLY": 0})
    c = throughput.constants_for(a100)
    resident = set()
    for candidate in pp.rank(kernel, a100, blocks=[(32, 2, 1), (32, 8, 1), (32, 32, 1)], folds=[(1, 1, 1)]).candidates:
        m = candidate.metrics
        total, named = throughput.predict_seconds(pp.harvest(kernel), a100, m, c)
        assert named["barrier"] == pytest.approx(named["latency"] / m.blocks_per_sm, rel=1e-12)
        terms = {k: v for k, v in named.items() if k not in ("overlap", "tail", "barrier")}
        full = throughput.overlapped_seconds(terms, c.overlap_exponent) + named["barrier"]
        assert total - named["tail"] == pytest.approx(full, rel=1e-9)
        resident.add(m.blocks_per_sm)
    assert len(resident) == 3  # one block per SM, and several
    copy = pp.rank(_copy(), a100, blocks=[(32, 4, 1)], folds=[(1, 1, 1)]).best
    assert "barrier" not in copy.prediction.seconds_per_lup
    # Hopper's fit (on kernels without shared memory) overlaps its terms nearly fully; a shared load feeds the
    # FMA after it, and the shared-memory kernel's terms overlap far less: at most Hopper's bound, fitted on the
    # H200's shared-memory sample, and at most a sum where none was measured; the A100's 0.86 stays
    hopper = throughput.constants_for(pp.get_device("H100"))
    assert hopper.overlap_exponent > hopper.shared_memory_max_overlap_exponent > 1
    assert c.overlap_exponent < c.shared_memory_max_overlap_exponent == 1.0
    assert (
        throughput.overlap_exponent_for(m, hopper) == hopper.shared_memory_max_overlap_exponent
        and throughput.overlap_exponent_for(m, c) == c.overlap_exponent
    )
    assert throughput.overlap_exponent_for(copy.metrics, hopper) == hopper.overlap_exponent


def test_the_copys_slowest_warp_sets_the_latency_at_a_barrier(a100):
    """Kernel Tuner's shared-memory convolution in blocks 224x1, tile 1x4: a block copies 238 columns, its first
    14 threads two per row (two rounds: one load in flight each, as the code leaves them over) and the others one;
    warp 0 waits for 2 rounds a row where the block's 7 warps average 8/7, and the other warps wait at the barrier
    for it: the latency term is 1.75 times Little's law's over the resident warps. In blocks 32x2, tile 2x4, every
    warp copies 3 columns a row; a kernel without shared stores has no barrier, whatever its warps load."""
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    spec = load_tunable_spec(Path(__file__).parents[1] / "validation/a100_convolution/convolution_shmem.py")
    c = throughput.constants_for(a100)
    for (tile_x, tile_y), block, ratio in (((1, 4), (224, 1, 1), 1.75), ((2, 4), (32, 2, 1), 1.0)):
        params = {"tile_size_x": tile_x, "tile_size_y": tile_y, "read_only": 0, "use_padding": 0}
        kernel = spec.kernel(params)
        m = pp.rank(kernel, a100, blocks=[block], folds=[(1, 1, 1)]).best.metrics
        assert m.extras["slowest_warp_load_rounds_ratio"] == pytest.approx(ratio, rel=1e-12)
        assert throughput.barrier_wait_ratio(m) == pytest.approx(ratio, rel=1e-12)
        balanced = replace(m, extras={**m.extras, "slowest_warp_load_rounds_ratio": 1.0})
        model = pp.harvest(kernel)
        latency = throughput.term_times(model, a100, m, c)["latency"]
        assert latency == pytest.approx(ratio * throughput.term_times(model, a100, balanced, c)["latency"], rel=1e-12)
    copy = pp.rank(_copy(), a100, blocks=[(48, 4, 1)], folds=[(1, 1, 1)]).best.metrics
    assert throughput.barrier_wait_ratio(copy) == 1.0


def test_the_default_with_every_term_named(a100):
    kernel = _copy()
    default = pp.rank(kernel, a100, blocks=[(32, 4, 1)], folds=[(1, 1, 1)], model="limiters").best
    assert set(default.prediction.seconds_per_lup) == {"FP", "L1", "L2", "DRAM"}
    assert not set(throughput.EXTRAS) & set(default.metrics.extras)  # nothing computed unless asked for
    chosen = pp.rank(kernel, a100, blocks=[(32, 4, 1)], folds=[(1, 1, 1)]).best
    terms = chosen.prediction.seconds_per_lup
    assert set(terms) == {"FP", "L1 banks", "L1 tags", "L2", "DRAM", "issue", "latency", "overlap", "tail"}
    assert set(throughput.EXTRAS) <= set(chosen.metrics.extras)
    # the limiters' four times are the same numbers under both models
    assert terms["DRAM"] == pytest.approx(default.prediction.seconds_per_lup["DRAM"])
    # candidates within the fit's own MAPE of the best are tied, as the limiters' within their measured error
    assert chosen.prediction.relative_error == throughput.constants_for(a100).mape_on_fitted_rows > 0
    # the prediction is the largest term plus what overlap and tail add
    largest = max(v for k, v in terms.items() if k not in ("overlap", "tail"))
    assert 1 / chosen.prediction.lups_per_second == pytest.approx(largest + terms["overlap"] + terms["tail"])


def test_every_library_device_has_the_models_data_from_its_device_file():
    for device in pp.list_devices():
        c = throughput.constants_for(device)
        assert c.dram_latency_cycles == device.dram_latency_cycles
        assert c.warp_instructions_per_cycle_per_sm == device.warp_instructions_per_cycle_per_sm


@pytest.mark.parametrize(
    "lender, borrower", [("A100-PCIe-40GB", "V100"), ("RTX-A4000", "RTX-A6000"), ("RTX-A4000", "A40")]
)
def test_a_device_without_its_own_fit_borrows_one_and_says_so(lender, borrower):
    """The GA10x GPUs borrow the RTX A4000's fit (their `borrowed_fit`), every other GPU the A100's."""
    own = throughput.constants_for(pp.get_device(lender))
    held_out = throughput.constants_for(pp.get_device(borrower))
    assert held_out.fitted_on.startswith(f"borrowed from {lender}, not fitted on {pp.get_device(borrower).name}")
    assert held_out.read_only_tag_passes_per_cycle == own.read_only_tag_passes_per_cycle
    assert held_out.overlap_exponent == own.overlap_exponent
    assert held_out.dram_latency_cycles == pp.get_device(borrower).dram_latency_cycles  # latencies stay its own


def test_every_number_in_the_data_file_has_kind_and_source():
    data = tomllib.loads(throughput.DATA_FILE.read_text())
    entries = [v for k, v in data["defaults"].items() if k != "fit"]
    assert "fit" in data["devices"][data["defaults"]["fit"]["borrowed_from"]]
    for device in data["devices"].values():
        entries += [v for k, v in device.items() if k not in ("fit", "borrowed_fit")]
        if "borrowed_fit" in device:
            assert "fit" in data["devices"][device["borrowed_fit"]["from"]] and device["borrowed_fit"]["reason"]
        fit = device.get("fit", {})
        entries += [v for k, v in fit.items() if k != "data"]
        if fit:
            assert "points" in fit["data"] and "MAPE" in fit["data"] and "held out" in fit["data"]
    for entry in entries:
        assert entry["kind"] in ("measured", "datasheet", "documented", "estimate", "fitted") and entry["source"]


def test_convolution_tiles_share_loads_only_where_the_code_has_no_guards():
    """The A100 convolution's 1x4 tiles (points a block apart in y): 4 outputs need 18 rows of 15 values.

    Block 64x1 divides the image, the source compiles no guard and nvcc loads the 18 x 15 = 270 values
    once; block 48x1 does not, each tile point's loads sit under its own guard and all 4 x 225 = 900
    are loaded (the measured runs: 19.7 against 7.5 GLup/s).
    """
    from pystencils_perf.estimate.addresses import compile_kernel
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    spec = load_tunable_spec(Path(__file__).parents[1] / "validation/a100_convolution/convolution.py")
    model = spec.kernel_for({"tile_size_x": 1, "tile_size_y": 4, "read_only": 0}).model()
    loads = {
        block: sum(i.kind.value == "load" for i in compile_kernel(model, block).instructions)
        for block in ((64, 1, 1), (48, 1, 1))
    }
    assert loads == {(64, 1, 1): 18 * 15, (48, 1, 1): 4 * 15 * 15}
    if shutil.which("nvcc"):  # nvcc agrees on its own PTX of the same loops (our re-implementation, convolution.cu)
        assert {block: _ptx_global_loads(block) for block in loads} == loads


def _ptx_global_loads(block) -> int:
    source = Path(__file__).parents[1] / "validation/a100_convolution/convolution.cu"
    defines = {"block_size_x": block[0], "block_size_y": block[1], "tile_size_x": 1, "tile_size_y": 4, "read_only": 0}
    ptx = subprocess.run(
        ["nvcc", "-ptx", "-arch=sm_80", *(f"-D{k}={v}" for k, v in defines.items()), "-o", "-", str(source)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return ptx.count("ld.global")


def test_the_toml_spec_of_the_convolution_predicts_what_the_python_one_does():
    """`convolution.toml` (window as load loops, tunable constants) and `convolution.py` (225 listed loads)."""
    from pystencils_perf.measure.kernel_tuner import load_tunable_spec

    here = Path(__file__).parents[1] / "validation/a100_convolution"
    toml, python = load_tunable_spec(here / "convolution.toml"), load_tunable_spec(here / "convolution.py")
    assert (toml.lattice_updates, toml.fixed_parameters) == (python.lattice_updates, python.fixed_parameters)
    for params in (
        {"tile_size_x": 1, "tile_size_y": 4, "read_only": 0},
        {"tile_size_x": 2, "tile_size_y": 1, "read_only": 1},
    ):
        a, b = toml.kernel_for(params).model(), python.kernel_for(params).model()
        assert a.lattice_updates == b.lattice_updates and a.read_only_fields == b.read_only_fields
        for block in ((64, 1, 1), (48, 2, 1)):  # unguarded and guarded
            ma = pp.rank(
                toml.kernel_for(params), "A100-PCIe-40GB", blocks=[block], folds=[(1, 1, 1)], model="throughput"
            )
            mb = pp.rank(
                python.kernel_for(params), "A100-PCIe-40GB", blocks=[block], folds=[(1, 1, 1)], model="throughput"
            )
            assert ma.candidates[0].metrics == mb.candidates[0].metrics, (params, block)


def _stencil_fields(points: int):
    """What `limiter_times` reads of a kernel model: two double fields of `points` elements each."""
    field = type("Field", (), {"element_bytes": 8, "shape": (points,)})()
    return type("Kernel", (), {"fields": (field, field)})()


def test_a_last_level_cache_takes_the_l2_misses_and_dram_sees_only_new_data():
    """RDNA2's Infinity Cache sits between L2 and DRAM: what misses L2 is its traffic; DRAM sees each wave's new data
    and the stores, and nothing once every field fits in it (repeated launches find them there)."""
    from pystencils_perf.metrics import Metrics
    from pystencils_perf.predict import limiter_times

    rx = pp.get_device("RX-6900-XT")
    v100 = pp.get_device("V100")
    m = Metrics(
        flops_per_lup=10,
        l1_cycles_per_lup=1,
        l2_load_bytes_per_lup=40,
        l2_store_bytes_per_lup=8,
        dram_load_bytes_per_lup=14,
        dram_store_bytes_per_lup=8,
        dram_compulsory_load_bytes_per_lup=8.5,
        blocks_per_sm=2,
        occupancy_limited_by="threads",
        wave_blocks=160,
        grid=(10, 10, 10),
    )
    large = limiter_times(_stencil_fields(10**9), rx, m)
    assert large["LLC"] == pytest.approx(22 / (rx.last_level_cache_bandwidth_gbs * 1e9))
    assert large["DRAM"] == pytest.approx(16.5 / (rx.dram_bandwidth_gbs * 1e9))
    assert limiter_times(_stencil_fields(10**6), rx, m)["DRAM"] == 0.0  # 16 MB of fields stay in its 128 MB
    assert "LLC" not in limiter_times(_stencil_fields(10**6), v100, m)  # no such level on a V100
    assert limiter_times(_stencil_fields(10**6), v100, m)["DRAM"] == pytest.approx(22 / (v100.dram_bandwidth_gbs * 1e9))


def _guarded_row(load_guard, read_only=False):
    """A 48-wide row of 2-point tiles: the second tile point of the last thread lies past the row (guarded)."""
    return CudaKernel(
        name="tiled row",
        arrays=(Array("a", "float", (1, 4200), read_only=read_only), Array("b", "float", (1, 4200))),
        threads=(2100, 1),
        loops={"xi": (0, 2)},
        indices={"x": "blockIdx.x * blockDim.x * 2 + threadIdx.x + xi * blockDim.x", "y": "0"},
        guard="x < 4200",
        load_guard=load_guard,
        loads=("a[y][x]", "a[y][x + 1]"),
        stores=("b[y][x]",),
        flops_per_lup=2.0,
    )


@pytest.mark.parametrize(
    "device, read_only, in_flight",
    [("MI250X", False, 1.0), ("A100-PCIe-40GB", False, 4.0), ("A100-PCIe-40GB", True, 1.0), ("MI250X", True, 1.0)],
)
def test_loads_under_an_if_of_their_own_are_one_in_flight_on_amd_and_predicated_on_nvidia(device, read_only, in_flight):
    """Hand-written code that guards each load (``load_guard``) puts every one in its own branch on AMD, where a
    wavefront then waits for each before the next issues; nvcc predicates them, but through its read-only path a
    guarded load is one in flight as well. The body's single ``if`` (no ``load_guard``, as in pystencils' code)
    changes nothing."""
    from pystencils_perf.models.throughput import mean_latency_cycles

    dev = pp.get_device(device)
    c = throughput.constants_for(dev)
    rate = c.guarded_read_only_loads_in_flight_per_warp if read_only else c.guarded_loads_in_flight_per_warp
    assert (rate, c.loads_in_flight_per_warp) == (in_flight, 4.0)
    kernel = _guarded_row("x < 4200", read_only)
    guarded = pp.rank(kernel, dev, blocks=[(64, 1, 1)], folds=[(1, 1, 1)]).best
    x, m = guarded.metrics.extras, guarded.metrics
    requests = x["read_only_load_requests_per_lup" if read_only else "load_requests_per_lup"]
    assert x["individually_guarded_load_requests_per_lup"] == requests > 0
    assert x["individually_guarded_read_only_load_requests_per_lup"] == (requests if read_only else 0)
    sm_cycles_per_second = dev.sm_count * dev.clock_ghz * 1e9
    expected = requests / in_flight / x["resident_warps_per_sm"] * mean_latency_cycles(m, c) / sm_cycles_per_second
    # the unloaded term (the prediction's also waits in the memory queue: `test_what_misses_l2_waits_in_...`)
    assert throughput.term_times(kernel.model(), dev, m, c)["latency"] == pytest.approx(expected)
    whole_body = pp.rank(_guarded_row(None, read_only), dev, blocks=[(64, 1, 1)], folds=[(1, 1, 1)]).best
    assert whole_body.metrics.extras["individually_guarded_load_requests_per_lup"] == 0
    assert throughput.term_times(_guarded_row(None, read_only).model(), dev, whole_body.metrics, c)[
        "latency"
    ] == pytest.approx(
        expected * in_flight / 4.0 * mean_latency_cycles(whole_body.metrics, c) / mean_latency_cycles(m, c)
    )


@pytest.mark.parametrize(
    "device, read_only_rate", [("MI250X", 1.0), ("W7800", 1.0), ("L40", "fitted"), ("A100-PCIe-40GB", "fitted")]
)
def test_a_borrowed_fit_does_not_override_what_the_vendor_states(device, read_only_rate):
    """HIP's __ldg is an ordinary load: on AMD GPUs a read_only load passes the tag stage like any other, whatever
    the A100's fit (borrowed for its other constant) found for NVIDIA's read-only path."""
    c = throughput.constants_for(pp.get_device(device))
    fit = throughput._values(throughput._table()["devices"]["A100-PCIe-40GB"]["fit"])
    for rate in ("read_only_tag_passes_per_cycle", "guarded_read_only_tag_passes_per_cycle"):
        assert getattr(c, rate) == (fit[rate] if read_only_rate == "fitted" else read_only_rate)
    assert c.overlap_exponent == fit["overlap_exponent"]


@pytest.mark.parametrize("load_guard", ["x < 4200", None])
def test_read_only_loads_under_an_if_of_their_own_pass_the_tag_stage_at_their_own_rate(load_guard):
    """nvcc computes a guarded ``__ldg``'s address under its guard: such loads pass the read-only path at the
    guarded rate, the same loads without their own ``if`` at the other (the fits on the tile-1x1 convolution rows
    find the guarded one slower on the A100, the A4000 and the H100)."""
    from dataclasses import replace

    dev = pp.get_device("A100-PCIe-40GB")
    c = throughput.constants_for(dev)
    assert c.guarded_read_only_tag_passes_per_cycle < c.read_only_tag_passes_per_cycle
    kernel = _guarded_row(load_guard, read_only=True)
    m = pp.rank(kernel, dev, blocks=[(64, 1, 1)], folds=[(1, 1, 1)]).best.metrics
    x = m.extras
    passes = x["read_only_l1_tag_passes_per_lup"]
    guarded = x["individually_guarded_read_only_l1_tag_passes_per_lup"]
    assert passes > 0 and guarded == (passes if load_guard else 0.0)
    ordinary = throughput.l1_request_stage_cycles_per_lup(x, dev)
    expected = (
        ordinary
        + (passes - guarded) / c.read_only_tag_passes_per_cycle
        + guarded / c.guarded_read_only_tag_passes_per_cycle
    )
    assert throughput.term_times(kernel.model(), dev, m, c)["L1 tags"] * dev.l1_cycles_per_second == pytest.approx(
        expected
    )
    slower = replace(c, guarded_read_only_tag_passes_per_cycle=c.guarded_read_only_tag_passes_per_cycle / 2)
    tags = [throughput.term_times(kernel.model(), dev, m, k)["L1 tags"] for k in (c, slower)]
    assert (tags[1] > tags[0]) == bool(load_guard)


def test_where_the_compiled_code_was_read_its_load_waits_set_the_latency():
    """hipcc's assembly says how often a wavefront waits for its loads (`ResourceUsage.load_waits_per_thread`):
    the latency term then takes one memory latency per wait and warp, over the resident warps, instead of the
    estimated loads in flight; code that waits on each of its loads is slower than code that batches them, and
    without compiled code the estimate stands."""
    from pystencils_perf.models.throughput import mean_latency_cycles

    dev = pp.get_device("MI250X")
    c = throughput.constants_for(dev)
    model = _guarded_row(None).model()
    estimated = pp.rank(model, dev, blocks=[(64, 1, 1)], folds=[(1, 1, 1)]).best
    assert "compiled_load_waits_per_lup" not in estimated.metrics.extras
    sm_cycles_per_second = dev.sm_count * dev.clock_ghz * 1e9
    latency = {}
    for waits_per_thread in (1.0, 2.0):  # both loads batched behind one wait, or one wait each
        read = pp.rank(
            replace(model, load_waits_by_fold=(((1, 1, 1), waits_per_thread),)),
            dev,
            blocks=[(64, 1, 1)],
            folds=[(1, 1, 1)],
        ).best
        x, m = read.metrics.extras, read.metrics
        # 2 tile points per thread, one wave of 64 threads per block: 1/128 warps per update
        assert x["warps_per_lup"] == pytest.approx(1 / 128)
        assert x["compiled_load_waits_per_lup"] == pytest.approx(waits_per_thread / 128)
        latency[waits_per_thread] = throughput.term_times(model, dev, m, c)["latency"]
        assert latency[waits_per_thread] == pytest.approx(
            waits_per_thread / 128 / x["resident_warps_per_sm"] * mean_latency_cycles(m, c) / sm_cycles_per_second,
            rel=1e-9,
            abs=0,
        )  # seconds: absolute tolerance would accept anything
    # a wait per load is slower than one for both, though not twice: a round of two waits for the slower one
    assert latency[1.0] < latency[2.0] < 2 * latency[1.0]


def test_a_round_of_loads_waits_for_its_slowest():
    """A warp waits for all loads of a round, so for DRAM if any of them goes there: with k requests per round
    and DRAM serving a share f of the requested bytes, ``1 - (1 - f)^k`` of the rounds wait for DRAM. One
    request per round (AMD's guarded loads) waits by the bytes' shares alone."""
    from types import SimpleNamespace

    extras = {
        "load_requests_per_lup": 8.0,
        "read_only_load_requests_per_lup": 0.0,
        "spill_load_requests_per_lup": 0.0,
        "individually_guarded_load_requests_per_lup": 0.0,
        "individually_guarded_read_only_load_requests_per_lup": 0.0,
    }
    m = SimpleNamespace(
        l1_requested_bytes_per_lup=56.0, l2_load_bytes_per_lup=14.0, dram_load_bytes_per_lup=8.0, extras=extras
    )
    c = throughput.constants_for(pp.get_device("A100-PCIe-40GB"))
    assert throughput.load_rounds_per_lup(extras, c) == (8.0, 2.0)  # 4 loads in flight per warp: two rounds
    up_to_l2, beyond_l2 = throughput.latency_parts_cycles(m, c)
    assert up_to_l2 == pytest.approx(
        c.l1_hit_latency_cycles + (1 - (1 - 14 / 56) ** 4) * (c.l2_hit_latency_cycles - c.l1_hit_latency_cycles)
    )
    assert beyond_l2 == pytest.approx((1 - (1 - 8 / 56) ** 4) * (c.dram_latency_cycles - c.l2_hit_latency_cycles))
    amd = throughput.constants_for(pp.get_device("MI250X"))
    one_per_round = SimpleNamespace(
        **{**vars(m), "extras": {**extras, "individually_guarded_load_requests_per_lup": 8.0}}
    )
    assert throughput.load_rounds_per_lup(one_per_round.extras, amd) == (8.0, 8.0)
    assert throughput.latency_parts_cycles(one_per_round, amd)[1] == pytest.approx(
        8 / 56 * (amd.dram_latency_cycles - amd.l2_hit_latency_cycles)
    )


def test_where_the_sass_was_read_its_instructions_set_the_issue_term():
    """The SASS of a launch's own code says how many instructions its warps issue, address arithmetic included
    (`ResourceUsage.instructions_per_thread`): the issue term counts those instead of the estimate (loads,
    stores, one FMA per two flops), and twice the instructions take twice the issue time."""
    from pystencils_perf.resources import ResourceUsage

    dev = pp.get_device("A100")
    c = throughput.constants_for(dev)
    model = _guarded_row(None).model()
    block, fold = (64, 1, 1), (1, 1, 1)
    estimated = pp.rank(model, dev, blocks=[block], folds=[fold]).best
    issue = {}
    for instructions in (1000.0, 2000.0):
        usage = ResourceUsage("sm_80", 40, 0, 0, 0, "nvcc", instructions_per_thread=instructions)
        read = pp.rank(
            replace(model, resources_by_launch=(((block, fold), usage),)), dev, blocks=[block], folds=[fold]
        ).best
        x = read.metrics.extras
        assert x["warp_instructions_per_lup"] == pytest.approx(instructions * x["warps_per_lup"])
        issue[instructions] = throughput.term_times(model, dev, read.metrics, c)["issue"]
    assert issue[2000.0] == pytest.approx(2 * issue[1000.0], rel=1e-12)
    assert estimated.metrics.extras["warp_instructions_per_lup"] != pytest.approx(
        1000.0 * estimated.metrics.extras["warps_per_lup"]
    )


def test_a_kernel_that_computes_outside_its_guard_pays_for_its_edge_blocks(a100):
    """Kernel Tuner's shared-memory convolution computes every output of a thread's tile and guards only the stores:
    KTT's counters on an RTX 2080 Ti count 225 FP32 instructions per launched point, not per update, in all 2640
    launches (validation/shared_memory/report.md, "The grid's edge"). 48-wide blocks cover 1000 points with 21
    blocks, 1008 threads; 40-wide ones with 25 blocks exactly."""
    desc = CudaKernel(
        name="guarded stores",
        arrays=(Array("a", "float", (1024,)), Array("b", "float", (1000,))),
        threads=(1000,),
        indices={"x": "blockIdx.x * blockDim.x + threadIdx.x"},
        guard="x < 1000",
        load_guard="x < 1024",
        loads=("a[x]",),
        stores=("b[x]",),
        flops_per_lup=450.0,
    )
    inside, outside = desc.model(), replace(desc, computes_outside_guard=True).model()
    assert "computes all of its points" in outside.summary() and "computes all" not in inside.summary()
    assert inside.launched_points_per_lup((48, 1, 1)) == 1.0
    assert outside.launched_points_per_lup((48, 1, 1)) == pytest.approx(1008 / 1000)
    assert outside.launched_points_per_lup((40, 1, 1)) == 1.0
    for block, launched in (((48, 1, 1), 1008 / 1000), ((40, 1, 1), 1.0)):
        metrics = [
            pp.rank(m, a100, blocks=[block], folds=[(1, 1, 1)], model="throughput").best.metrics
            for m in (inside, outside)
        ]
        assert metrics[1].flops_per_lup == pytest.approx(450.0 * launched)
        assert metrics[0].flops_per_lup == 450.0
        # per warp a load, a store and 225 FMAs, the FMAs of the edge block's warps too; two warps per block
        for m, fmas in zip(metrics, (225.0, 225.0 * launched)):
            assert m.extras["warp_instructions_per_lup"] == pytest.approx((2 + fmas) * 2 / block[0])
        assert metrics[1].extras["warps_per_lup"] == pytest.approx(metrics[0].extras["warps_per_lup"] * launched)
