"""measure: its error path without a GPU, and every part that runs without one.

The GPU itself (cupy, CUDA events, Nsight Compute) cannot run here; what does
not need it is tested with numpy standing in for cupy's array module.
"""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from pystencils_perf import harvest
from pystencils_perf.cli import main
from pystencils_perf.errors import ConfigurationError, MeasurementError
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.adapters.pystencils.measure import measure
from pystencils_perf.measure.dataset import Measurement, read_dataset, write_dataset
from pystencils_perf.adapters.pystencils.gpu import (
    aligned_field,
    allocate_fields,
    apply_fold,
    configure_launch,
    fill_random,
    launch_parameter_values,
)
from pystencils_perf.measure.ncu import (
    NCU_METRICS,
    ncu_profile_command,
    parse_raw_csv,
    per_lattice_update,
    profile,
    unreported_counters,
)

HAVE_CUPY = importlib.util.find_spec("cupy") is not None
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.skipif(HAVE_CUPY, reason="cupy is installed: the error path needs a machine without it")
def test_measure_without_cupy_exits_2_with_one_line(capsys, tmp_path):
    out = tmp_path / "data.csv"
    assert main(["measure", str(EXAMPLES / "star3d_r4.py"), "--device", "V100", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert (
        err.startswith("pystencils-perf: error: measure needs cupy and a CUDA GPU")
        and "pip install cupy-cuda12x" in err
    )
    assert not out.exists()


def test_too_few_repeats_refused_before_any_gpu_work(jacobi_kernel):
    with pytest.raises(ConfigurationError, match="at least 7 timed runs"):
        measure(jacobi_kernel, "V100", repeats=5)


def _address(a) -> int:
    return a.__array_interface__["data"][0]


def test_fields_allocated_with_the_modelled_alignment(jacobi_kernel):
    model = harvest(jacobi_kernel, align="interior")
    arrays = allocate_fields(np, model, seed=1)
    for f in model.fields:
        a = arrays[f.name]
        assert a.shape == f.shape and tuple(s // a.itemsize for s in a.strides) == f.strides
        assert _address(a) % 256 == f.base_offset_bytes
        assert _address(a[1:, 1:]) % 256 == 0  # the first interior point, as align="interior" models
        assert np.all((a >= 0.5) & (a < 1.5))  # random, never zero
    assert not np.array_equal(arrays["src"], arrays["dst"])
    again = allocate_fields(np, model, seed=1)
    assert np.array_equal(again["src"], arrays["src"])  # reproducible from the seed


def test_base_alignment_and_integer_fill(jacobi_kernel):
    f = harvest(jacobi_kernel).fields[0]
    assert f.base_offset_bytes == 0 and _address(aligned_field(np, f)) % 256 == 0
    ints = np.empty((5, 7), dtype=np.int32)
    fill_random(np, ints, seed=3)
    assert ints.min() >= 1


def test_block_size_set_and_checked_on_pystencils_launch_configuration(jacobi_kernel):
    model = harvest(jacobi_kernel)
    launch = LaunchConfig((16, 4, 1))
    grid = launch.grid(model.work_items)
    lc = jacobi_kernel.get_launch_configuration()
    configure_launch(lc, launch.block, grid, {})
    assert lc.evaluate() == ((16, 4, 1), grid)
    with pytest.raises(MeasurementError, match=r"would launch block \(16, 4, 1\) x grid"):
        configure_launch(jacobi_kernel.get_launch_configuration(), launch.block, (1, 1, 1), {})


def test_launch_parameters_of_a_variable_size_kernel():
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[2D]")
    kernel = ps.create_kernel(
        [ps.Assignment(dst[0, 0], src[1, 0] + src[-1, 0])], ps.CreateKernelConfig(target=ps.Target.CUDA)
    )
    arrays = {"src": np.empty((34, 66)), "dst": np.empty((34, 66))}
    lc = kernel.get_launch_configuration()
    assert sorted(launch_parameter_values(lc, arrays).values()) == [34, 66]
    configure_launch(lc, (32, 2, 1), (2, 16, 1), arrays)  # 64 x 32 interior points


def test_folding_needs_the_kernels_recipe(jacobi_kernel):
    assert apply_fold(jacobi_kernel, LaunchConfig((16, 4, 1)), None) is jacobi_kernel
    with pytest.raises(
        MeasurementError, match="thread folding 1x2x1 regenerates kernel .jacobi_2d. from its assignments"
    ):
        apply_fold(jacobi_kernel, LaunchConfig((16, 4, 1), (1, 2, 1)), None)


# the layout of `ncu --import REPORT --csv --page raw --print-units base`: header, a units row, one row per launch
NCU_RAW = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size",'
    + ",".join(f'"{m}"' for m in NCU_METRICS)
    + "\n"
    + '"","","","","","","",'
    + '"byte","byte","sector","sector",""'
    + "\n"
    + '"1","4242","python3","gpu01","star3d_r2","(32, 2, 16)","(19, 298, 32)","2,000,000","800,000","3,000,000","250,000","1,500,000"\n'
    + '"0","4242","python3","gpu01","star3d_r2","(16, 4, 16)","(38, 149, 32)","1000000","800000","2500000","250000","1000000"\n'
)


def test_ncu_raw_page_to_bytes_per_lattice_update():
    rows = parse_raw_csv("==PROF== Disconnected\n" + NCU_RAW)
    assert [r["ID"] for r in rows] == ["0", "1"]  # launch order, units row dropped
    values = per_lattice_update(rows[1], lattice_updates=100_000, sector_bytes=32)
    assert values == {"dram_load": 20.0, "dram_store": 8.0, "l2_load": 960.0, "l2_store": 80.0, "l1_load": 15.0}
    with pytest.raises(MeasurementError, match="no raw CSV page"):
        parse_raw_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")


def test_counter_ncu_does_not_know_is_left_out():
    """Hopper's ncu has no column for the L1 wavefront counter: the other volumes still land, l1_load stays empty."""
    l1 = next(c for c, (name, _) in NCU_METRICS.items() if name == "l1_load")
    header, units, launch = NCU_RAW.splitlines()[:3]
    columns = next(csv.reader([header]))
    keep = [i for i, c in enumerate(columns) if c != l1]
    text = "\n".join(
        ",".join(f'"{v}"' for v in (list(next(csv.reader([line])))[i] for i in keep))
        for line in (header, units, launch)
    )
    rows = parse_raw_csv(text)
    assert unreported_counters(rows) == [l1]
    assert per_lattice_update(rows[0], lattice_updates=100_000, sector_bytes=32) == {
        "dram_load": 20.0,
        "dram_store": 8.0,
        "l2_load": 960.0,
        "l2_store": 80.0,
    }


def test_ncu_command_and_missing_ncu(tmp_path):
    cmd = ncu_profile_command("ncu", tmp_path / "rep", ["star3d_r2"], ["python3", "-m", "pystencils_perf.cli"])
    assert cmd[cmd.index("--metrics") + 1] == ",".join(NCU_METRICS)
    assert "regex:^(star3d_r2)$" in cmd and cmd[-3:] == ["python3", "-m", "pystencils_perf.cli"]
    with pytest.raises(MeasurementError, match="'no-such-ncu' is not on PATH"):
        profile(["true"], [LaunchConfig((32, 1, 1))], ["k"], 1, 32, ncu="no-such-ncu")


def test_dataset_round_trip(tmp_path):
    rows = [
        Measurement(
            LaunchConfig((32, 2, 16)), {"glups": 31.9, "dram_load": 10.5}, {"device": "NVIDIA H100", "time_ms": "5.7"}
        ),
        Measurement(LaunchConfig((16, 4, 16), (1, 1, 2)), {"glups": 30.1}, {"device": "NVIDIA H100", "time_ms": "6.0"}),
    ]
    path = tmp_path / "data.csv"
    write_dataset(path, rows)
    header = path.read_text().splitlines()[0]
    assert header.startswith("bx,by,bz,fx,fy,fz,meas_dram_load_B_per_lup,") and header.endswith(",device,time_ms")
    back = read_dataset(path)
    assert [(r.launch, r.values, r.run) for r in back.rows] == [(r.launch, r.values, r.run) for r in rows]
    assert [m.name for m in back.metrics] == ["dram_load", "glups"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("bx,by,bz,fx,fy,meas_glups\n", "lacks the column(s) fz"),
        ("bx,by,bz,fx,fy,fz\n", "has no measured column"),
        ("bx,by,bz,fx,fy,fz,meas_glups\n", "has no rows"),
        ("bx,by,bz,fx,fy,fz,meas_glups\n32,x,1,1,1,1,3\n", "line 2: column by = 'x' is not an integer"),
        ("bx,by,bz,fx,fy,fz,meas_glups\n32,1,1,1,1,1,-3\n", "line 2: column meas_glups = '-3' must be a positive"),
        (
            "bx,by,bz,fx,fy,fz,meas_glups\n32,1,1,1,1,1,3\n32,1,1,1,1,1,4\n",
            "line 3 repeats candidate 32x1x1 f1x1x1 of line 2",
        ),
        ("bx,by,bz,fx,fy,fz,meas_glups\n0,1,1,1,1,1,3\n", "line 2: launch block must be three positive integers"),
    ],
)
def test_dataset_errors_name_line_and_column(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(MeasurementError) as info:
        read_dataset(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_ncu_child_repeats_the_measured_command():
    """Nsight Compute profiles a child that must launch exactly the parent's candidates."""
    from pystencils_perf.cli import _ncu_child_argv, build_parser

    argv = [
        "measure",
        str(EXAMPLES / "star3d_r4.py"),
        "--device",
        "H100",
        "--out",
        "d.csv",
        "--blocks",
        "32x2x16,16x4x16",
        "--align",
        "interior",
        "--domain",
        "64x64x64",
        "--ncu",
    ]
    parent = build_parser().parse_args(argv)
    child_argv = _ncu_child_argv(parent)
    assert child_argv[1:4] == ["-m", "pystencils_perf.cli", "measure"]
    child = build_parser().parse_args(child_argv[3:])
    assert child.ncu_pass and not child.ncu
    for option in ("spec", "device", "blocks", "fold", "align", "domain", "threads"):
        assert getattr(child, option) == getattr(parent, option)


def test_folded_candidate_regenerated_from_assignments():
    """Assignments are their own recipe: perf_apply regenerates them folded, and the folded grid is checked."""
    from pystencils_perf.catalog.stencils import star_3d_assignments
    from pystencils_perf.adapters.pystencils.gpu import runnable

    kernel, recipe = runnable(star_3d_assignments(1, (32, 16, 8)))
    launch = LaunchConfig((8, 4, 4), (1, 1, 2))
    folded = apply_fold(kernel, launch, recipe)
    assert folded is not kernel
    grid = launch.grid(harvest(kernel).folded(launch.fold).work_items)  # (4, 4, 1): 8 z-points, 2 per thread
    configure_launch(folded.get_launch_configuration(), launch.block, grid, {})
    with pytest.raises(MeasurementError, match="define `kernel` .* or `assignments` in the SPEC"):
        runnable("not a kernel")
