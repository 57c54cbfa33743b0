"""AN5D's model against the paper's Table 5 and the worked example of SEED_MODELS.md sec. 4(b)."""

import pytest
from pystencils_perf.errors import PerfError

from pystencils_perf_an5d import (
    An5dDeviceError,
    An5dParameterError,
    Config,
    Problem,
    benchmark,
    get_an5d_device,
    parameters_of,
    paper_problem,
    predict,
)
from pystencils_perf_an5d.table5 import table5_entries

ENTRIES = table5_entries()


def test_table5_has_84_entries():
    assert len(ENTRIES) == 84
    assert {(e.gpu, e.precision) for e in ENTRIES} == {(g, p) for g in ("V100", "P100") for p in ("float", "double")}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.stencil}-{e.gpu}-{e.precision}")
def test_table5_model_column_within_half_percent(entry):
    prediction = predict(entry.problem, entry.gpu, entry.config)
    assert prediction.gflops == pytest.approx(entry.model_gflops, rel=0.005)
    assert prediction.bottleneck == entry.bottleneck


def test_worked_example_star2d1r_v100_float():
    """Every intermediate of SEED_MODELS.md's worked example (b_T = 10, b_S = 256, h_SN = 256)."""
    prediction = predict(paper_problem(benchmark("star2d1r"), "float"), "V100", Config(10, (256,), 256))
    t = prediction.threads
    assert (t.total, t.boundary, t.out_of_bound_first, t.out_of_bound_last) == (
        316_216_320,
        68_198,
        2_717_484,
        2_523_444,
    )
    assert (t.global_reads, t.global_writes) == (313_498_836, 268_435_456)
    assert (t.shared_writes, t.shared_reads) == (3_037_977_600, 2_868_977_760)
    assert prediction.sm_efficiency == 1.0
    assert prediction.alu_efficiency == pytest.approx(0.9)
    seconds = prediction.seconds_by_resource
    assert seconds["compute"] == pytest.approx(0.18312, rel=1e-4)
    assert seconds["global"] == pytest.approx(0.29428, rel=1e-4)
    assert seconds["shared"] == pytest.approx(0.32961, rel=1e-4)
    assert prediction.bottleneck == "shared"
    assert prediction.gflops == pytest.approx(7329.57, abs=0.01)


def test_paper_exact_false_restores_the_radius_in_the_stream_overlap():
    """star2d2r/V100/double is global-bound: with rad restored (A18) it drops 4431 -> 4239 (SEED_MODELS 4(d))."""
    problem, config = paper_problem(benchmark("star2d2r"), "double"), Config(6, (512,), 128)
    exact = predict(problem, "V100", config)
    fixed = predict(problem, "V100", config, paper_exact=False)
    assert exact.bottleneck == fixed.bottleneck == "global"
    radius_only_gflops = exact.gflops * exact.seconds_by_resource["global"] / fixed.seconds_by_resource["global"]
    assert radius_only_gflops == pytest.approx(4239, rel=0.001)
    assert exact.sm_efficiency == pytest.approx(13 / 14)  # floor(x)/ceil(x)
    assert 13 / 14 < fixed.sm_efficiency < 1  # x/ceil(x)


def test_paper_exact_false_uses_table4_peaks():
    """Compute-bound box2d1r/V100/float with Table 4's rounded 15,700 GFLOP/s: 11327 -> 11351 (SEED_MODELS 4(d))."""
    fixed = predict(paper_problem(benchmark("box2d1r"), "float"), "V100", Config(10, (256,), 256), paper_exact=False)
    assert fixed.bottleneck == "compute"
    assert fixed.gflops == pytest.approx(11351, rel=0.001)


def test_star3d1r_p100_with_bt3_is_predicted_slower():
    """Sec. 7.2's variant (b_T reduced to 3): the model predicts 2011.4 GFLOP/s, global-bound, against 2682 at b_T = 5."""
    prediction = predict(paper_problem(benchmark("star3d1r"), "float"), "P100", Config(3, (32, 32), 128))
    assert prediction.gflops == pytest.approx(2011.4, abs=0.1)
    assert prediction.bottleneck == "global"


@pytest.mark.parametrize(
    "name, flops_per_cell, alu_efficiency",
    [
        ("star2d1r", 9, 0.9),
        ("box2d1r", 17, 0.7727),
        ("star3d1r", 13, 0.9286),
        ("box3d1r", 53, 0.9138),
        ("j2d5pt", 10, 0.8333),
        ("gradient2d", 19, 0.6818),
        ("box3d4r", 1457, 0.9885),
    ],
)
def test_flops_per_cell_and_alu_efficiency(name, flops_per_cell, alu_efficiency):
    stencil = benchmark(name)
    assert stencil.flops_per_cell == flops_per_cell
    assert stencil.ops.alu_efficiency == pytest.approx(alu_efficiency, abs=5e-5)


def test_devices_by_library_name_and_paper_name():
    assert get_an5d_device("V100").name == "V100-PCIe-32GB"
    assert get_an5d_device("v100-pcie-32gb").name == "V100-PCIe-32GB"
    p100 = get_an5d_device("P100")
    assert (p100.name, p100.sm_count) == ("P100-PCIe-16GB", 56)
    parameters = parameters_of(p100)
    assert parameters.peak_gflops(p100, "float") == pytest.approx(10608.64)
    assert parameters.peak_gflops(p100, "double", from_clock=False) == 5300
    assert all(source.strip() for source in parameters.sources.values())


@pytest.mark.parametrize("device", ["H100", "no-such-gpu"])
def test_device_without_an5d_data(device):
    with pytest.raises(An5dDeviceError, match=f"no AN5D device data for '{device}'"):
        predict(paper_problem(benchmark("star2d1r"), "float"), device, Config(10, (256,), 256))


@pytest.mark.parametrize(
    "config, message",
    [
        (Config(0, (256,), 256), "b_T = 0"),
        (Config(10, (256,), 0), "h_SN = 0"),
        (Config(10, (256, 16), 256), r"b_S = \(256, 16\): a 2D stencil needs 1"),
        (Config(10, (2048,), 256), "2048 threads exceed 1024"),
        (Config(128, (256,), 256), "b_S = 256 leaves no compute region for b_T = 128"),
    ],
)
def test_invalid_parameters(config, message):
    with pytest.raises(An5dParameterError, match=message):
        predict(paper_problem(benchmark("star2d1r"), "float"), "V100", config)


def test_less_than_one_wave_is_an_error_unless_fixed():
    problem = Problem(benchmark("star2d1r"), "float", size=1024)
    with pytest.raises(An5dParameterError, match="fewer thread blocks than one wave"):
        predict(problem, "V100", Config(10, (256,), 256))
    assert 0 < predict(problem, "V100", Config(10, (256,), 256), paper_exact=False).sm_efficiency < 1


@pytest.mark.parametrize(
    "precision, size, message", [("half", 512, "precision 'half'"), ("float", 0, "problem size 0")]
)
def test_invalid_problem(precision, size, message):
    with pytest.raises(An5dParameterError, match=message) as info:
        Problem(benchmark("star3d1r"), precision, size)
    assert isinstance(info.value, PerfError)
