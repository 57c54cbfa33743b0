"""Kernel Tuner caches (JSON, .json.gz, interrupted JSON, CSV) as measured data, and validate on them."""

import csv
import gzip
import json
from pathlib import Path

import pytest

from pystencils_perf.cli import main
from pystencils_perf.errors import MeasurementError, PerfError
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.tune.replay import replay_candidates
from pystencils_perf.validate import validate_tuned
from pystencils_perf.measure.kernel_tuner import (
    is_kernel_tuner_file,
    load_tunable_spec,
    read_kernel_tuner,
    run_to_run_spreads,
    variants,
)

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / "validation" / "data" / "external"
N = 4096

SPEC = f"""
from pystencils_perf_cuda import Array, CudaKernel
lattice_updates = {N} * {N}
fixed_parameters = {{"use_shmem": 0}}

def kernel_for(params):
    tile = int(params["tile_size_y"])
    return CudaKernel(
        name=f"copy tile {{tile}}", arrays=(Array("a", "float", ({N}, {N})), Array("b", "float", ({N}, {N}))),
        threads=({N}, {N} // tile),
        indices={{"x": "blockIdx.x * blockDim.x + threadIdx.x", "y": f"(blockIdx.y * blockDim.y + threadIdx.y) * {{tile}} + k"}},
        guard="x < {N} && y < {N}", loops={{"k": (0, tile)}}, loads=("a[y][x]",), stores=("b[y][x]",))
"""


def _entry(bx, by, tile, shmem, time):
    return {
        "block_size_x": bx,
        "block_size_y": by,
        "tile_size_y": tile,
        "use_shmem": shmem,
        "time": time,
        "times": [time],
        "compile_time": 1.0,
        "GFLOP/s": 1.0,
    }


CACHE = {
    "device_name": "NVIDIA A100-PCIE-40GB",
    "tune_params_keys": ["block_size_x", "block_size_y", "tile_size_y", "use_shmem"],
    "cache": {
        "32,4,1,0": _entry(32, 4, 1, 0, 0.2),
        "64,2,1,0": _entry(64, 2, 1, 0, 0.25),
        "128,1,1,0": _entry(128, 1, 1, 0, 0.4),
        "32,4,2,0": _entry(32, 4, 2, 0, 0.16),
        "64,2,2,0": _entry(64, 2, 2, 0, 0.5),
        "32,4,1,1": _entry(32, 4, 1, 1, 0.1),  # another kernel: the SPEC fixes use_shmem = 0
        "1024,2,1,0": _entry(1024, 2, 1, 0, "InvalidConfig"),
    },
}


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "spec.py"
    path.write_text(SPEC)
    return load_tunable_spec(path)


def _write(tmp_path, name, data, gz=False):
    path = tmp_path / name
    text = data if isinstance(data, str) else json.dumps(data)
    with gzip.open(path, "wt") if gz else open(path, "w") as fh:
        fh.write(text)
    return path


def test_counters_in_a_cache_are_volumes_not_parameters(tmp_path):
    """Kernel Tuner's observers may store Nsight Compute metrics beside the time: they are no tunable parameter."""
    entry = {**_entry(32, 4, 1, 0, 0.2), "lts__t_sectors_op_read.sum": N * N // 4}
    data = read_kernel_tuner(_write(tmp_path, "c.json", {"cache": {"32,4,1,0": entry}}))
    assert "lts__t_sectors_op_read.sum" not in data.runs[0].params
    (group,) = variants(data, load_tunable_spec(_write(tmp_path, "s.py", SPEC)))
    assert group.dataset.rows[0].values["l2_load"] == pytest.approx(8.0)  # 32-B sectors, one per 4 updates
    entry["lts__t_sectors_op_read.sum"] = "n/a"
    with pytest.raises(MeasurementError, match="cache entry '32,4,1,0': counter lts__t_sectors_op_read.sum = 'n/a'"):
        read_kernel_tuner(_write(tmp_path, "c.json", {"cache": {"32,4,1,0": entry}}))


def test_observer_outputs_in_a_cache_are_not_parameters(tmp_path, spec):
    """Kernel Tuner's observers store their outputs beside the time (registers, a verification error): where the
    cache names its tunable parameters, only those are parameters, so the outputs split no variant."""
    cache = {
        **CACHE,
        "cache": {
            key: {**entry, "num_regs": 40 + n, "relative_error": 1e-7 * n}
            for n, (key, entry) in enumerate(CACHE["cache"].items())
        },
    }
    data = read_kernel_tuner(_write(tmp_path, "c.json", cache))
    assert all(set(r.params) == set(CACHE["tune_params_keys"]) for r in data.runs)
    assert [len(g.dataset.rows) for g in variants(data, spec)] == [3, 2]
    unnamed = {k: v for k, v in cache.items() if k != "tune_params_keys"}
    params = read_kernel_tuner(_write(tmp_path, "u.json", unnamed)).runs[0].params
    assert "relative_error" in params and "num_regs" not in params  # the registers are a result we know


def test_json_gz_and_interrupted_json_read_alike(tmp_path):
    plain = read_kernel_tuner(_write(tmp_path, "c.json", CACHE))
    packed = read_kernel_tuner(_write(tmp_path, "c.json.gz", CACHE, gz=True))
    # Kernel Tuner writes the closing braces only when tuning ends
    interrupted = read_kernel_tuner(_write(tmp_path, "i.json", json.dumps(CACHE)[:-2] + ",\n"))
    for data in (plain, packed, interrupted):
        assert data.device_name == "NVIDIA A100-PCIE-40GB"
        assert len(data.runs) == 6 and len(data.failed) == 1
        assert {"times", "compile_time", "GFLOP/s"}.isdisjoint(data.runs[0].params)


def test_variants_group_non_block_parameters_and_compute_throughput(tmp_path, spec):
    groups = variants(read_kernel_tuner(_write(tmp_path, "c.json", CACHE)), spec)
    assert [g.params for g in groups] == [{"tile_size_y": 1}, {"tile_size_y": 2}]
    tile1 = {r.launch: r.values["glups"] for r in groups[0].dataset.rows}
    assert set(tile1) == {LaunchConfig((32, 4, 1)), LaunchConfig((64, 2, 1)), LaunchConfig((128, 1, 1))}
    assert tile1[LaunchConfig((32, 4, 1))] == pytest.approx(N * N / 0.2e-3 / 1e9)  # use_shmem = 1's 0.1 ms left out


def test_flat_csv_with_mean_time_column(tmp_path, spec):
    csv_path = tmp_path / "flat.csv"
    csv_path.write_text(
        "gpu,device_name,block_size_x,block_size_y,tile_size_y,time_ms_mean,n_reps\n"
        "A100,NVIDIA A100-PCIE-40GB,32,4,1,0.2,32\nA100,NVIDIA A100-PCIE-40GB,64,2,2,0.5,32\n"
    )
    assert is_kernel_tuner_file(csv_path) and not is_kernel_tuner_file(
        ROOT / "validation/data/v100/v100_star3d_r2_1024_folding.csv"
    )
    groups = variants(read_kernel_tuner(csv_path), spec)  # use_shmem is not a column: the fixed value is assumed
    assert [len(g.dataset.rows) for g in groups] == [1, 1]


KTT_HEADER = (
    "BLOCK_SIZE_X,BLOCK_SIZE_Y,TILE_SIZE_Y,use_shmem,registers,shared_mem_bytes,grid_x,grid_y,duration_us,"
    "dram__sectors_read.sum,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,"
    "sm__warps_active.avg.pct_of_peak_sustained_active\n"
)


def test_ktt_export_with_counters_gives_volumes_except_where_registers_spill(tmp_path):
    """KTT's capitals, its time in microseconds and Nsight Compute counters: volumes per update, none a parameter."""
    csv_path = tmp_path / "ktt.csv"
    sectors = N * N // 8  # one float per update, in 32-B sectors: 4 B/update
    csv_path.write_text(
        KTT_HEADER + f"32,4,1,0,28,0,128,1024,200.0,{sectors},{3 * sectors},0,97.5\n"
        f"64,2,1,0,40,0,64,2048,250.0,{sectors},{5 * sectors},1000,80.0\n"
    )
    assert is_kernel_tuner_file(csv_path)
    spec_path = tmp_path / "ktt_spec.py"
    spec_path.write_text(
        SPEC + "block_parameters = ('BLOCK_SIZE_X', 'BLOCK_SIZE_Y')\n"
        "def kernel_for(params, _described=kernel_for):\n"
        "    return _described({'tile_size_y': params['TILE_SIZE_Y']})\n"
    )
    data = read_kernel_tuner(csv_path)
    assert [r.params for r in data.runs] == [
        {"BLOCK_SIZE_X": 32, "BLOCK_SIZE_Y": 4, "TILE_SIZE_Y": 1, "use_shmem": 0},
        {"BLOCK_SIZE_X": 64, "BLOCK_SIZE_Y": 2, "TILE_SIZE_Y": 1, "use_shmem": 0},
    ]
    assert [r.spills for r in data.runs] == [False, True]
    (group,) = variants(data, load_tunable_spec(spec_path), sector_bytes=32)
    rows = {r.launch.block: r.values for r in group.dataset.rows}
    assert rows[(32, 4, 1)] == pytest.approx({"glups": N * N / 200e-6 / 1e9, "dram_load": 4.0, "l2_load": 12.0})
    assert rows[(64, 2, 1)] == pytest.approx({"glups": N * N / 250e-6 / 1e9})  # spills: its counters hold them too
    csv_path.write_text(KTT_HEADER + "32,4,1,0,28,0,128,1024,200.0,-5,0,0,97.5\n")
    with pytest.raises(MeasurementError, match="line 2: counter dram__sectors_read.sum = '-5' is not a non-negative"):
        read_kernel_tuner(csv_path)
    csv_path.write_text(KTT_HEADER + "32,4,1,0,28,0,128,1024,0,0,0,0,97.5\n")
    with pytest.raises(MeasurementError, match="line 2: time 0 is not a positive number of microseconds"):
        read_kernel_tuner(csv_path)


def _ktt_result(bx, by, tile, status="Ok", duration_us=0.0, counters=None):
    """One entry of KTT 2's ``Results``, as its JSON output holds it."""
    configuration = [
        {"Name": name, "Value": value, "ValueType": "UnsignedInt"}
        for name, value in (("BLOCK_SIZE_X", bx), ("BLOCK_SIZE_Y", by), ("TILE_SIZE_Y", tile), ("IMAGE_WIDTH", N))
    ]
    computation = {
        "CompilationData": {"RegistersCount": 28, "LocalMemorySize": 0},
        "Duration": duration_us,
        "KernelFunction": "copy",
    }
    if counters:
        computation["ProfilingData"] = {
            "Counters": [{"Name": k, "Type": "Double", "Value": v} for k, v in counters.items()]
        }
    return {
        "ComputationResults": [computation] if status == "Ok" else [],
        "Configuration": configuration,
        "KernelName": "copy",
        "Status": status,
        "TotalDuration": duration_us,
    }


KTT_OUTPUT = {
    "Metadata": {"Device": "NVIDIA GeForce RTX 3090", "KttVersion": "2.1.0", "TimeUnit": "Microseconds"},
    "Results": [
        _ktt_result(32, 4, 1, duration_us=200.0, counters={"dram__sectors_read.sum": N * N // 8}),
        _ktt_result(64, 2, 1, duration_us=250.0),
        _ktt_result(1024, 2, 1, status="ComputationFailed"),
    ],
}


def test_ktt_json_output_reads_as_its_flat_export_does(tmp_path):
    """KTT's own output: parameters from each result's Configuration, its TotalDuration in the metadata's unit, the
    counters it profiled, and the configurations that failed."""
    data = read_kernel_tuner(_write(tmp_path, "ktt.json.gz", KTT_OUTPUT, gz=True))
    assert data.device_name == "NVIDIA GeForce RTX 3090"
    assert [r.params for r in data.runs] == [
        {"BLOCK_SIZE_X": 32, "BLOCK_SIZE_Y": 4, "TILE_SIZE_Y": 1, "IMAGE_WIDTH": N},
        {"BLOCK_SIZE_X": 64, "BLOCK_SIZE_Y": 2, "TILE_SIZE_Y": 1, "IMAGE_WIDTH": N},
    ]
    assert [r.time_ms for r in data.runs] == [0.2, 0.25]
    assert data.runs[0].counters == {"dram__sectors_read.sum": N * N // 8} and data.runs[1].counters == {}
    assert data.failed == ({"BLOCK_SIZE_X": 1024, "BLOCK_SIZE_Y": 2, "TILE_SIZE_Y": 1, "IMAGE_WIDTH": N},)
    in_ms = {**KTT_OUTPUT, "Metadata": {**KTT_OUTPUT["Metadata"], "TimeUnit": "Milliseconds"}}
    assert [r.time_ms for r in read_kernel_tuner(_write(tmp_path, "ms.json", in_ms)).runs] == [200.0, 250.0]


KTT_SPEC = SPEC + (
    "block_parameters = ('BLOCK_SIZE_X', 'BLOCK_SIZE_Y')\n"
    "def kernel_for(params, _described=kernel_for):\n"
    "    return _described({'tile_size_y': params['TILE_SIZE_Y']})\n"
)


def _with_registers(registers: int, local_bytes: int = 0) -> dict:
    """`KTT_OUTPUT` with every run's code at `registers` per thread and `local_bytes` of local memory."""
    results = json.loads(json.dumps(KTT_OUTPUT["Results"]))
    for result in results:
        for computation in result["ComputationResults"]:
            computation["CompilationData"].update(RegistersCount=registers, PrivateMemorySize=local_bytes)
    return {**KTT_OUTPUT, "Results": results}


def test_the_registers_a_ktt_output_records_set_each_launchs_occupancy(tmp_path):
    """KTT records each run's registers and local memory: validate and a replay rank the launches with them (255
    registers leave 32x4 blocks two to an A100 SM, so they are predicted slower than with 28), as they ran."""
    spec_path = tmp_path / "ktt_spec.py"
    spec_path.write_text(KTT_SPEC)
    spec = load_tunable_spec(spec_path)
    few = read_kernel_tuner(_write(tmp_path, "few.json", _with_registers(28)))
    many = read_kernel_tuner(_write(tmp_path, "many.json", _with_registers(255, 96)))
    usage = many.runs[0].resources
    assert (usage.registers_per_thread, usage.spill_store_bytes, usage.spill_kept_bytes) == (255, 96, 96)
    assert few.runs[0].resources.registers_per_thread == 28 and not few.runs[0].resources.spilled

    def predicted(data):
        validation = validate_tuned(data, spec, "A100")
        return {c.launch.block: c.prediction.glups for c in validation.ranking.candidates}

    assert predicted(many)[(32, 4, 1)] < 0.9 * predicted(few)[(32, 4, 1)]
    replayed = {
        name: {c.launch.block: c.predicted_seconds for c in replay_candidates(data, spec, "A100", jobs=1).candidates}
        for name, data in (("few", few), ("many", many))
    }
    assert replayed["many"][(32, 4, 1)] > 1.1 * replayed["few"][(32, 4, 1)]


def test_a_caches_observed_registers_are_its_runs_resources(tmp_path, spec):
    """Kernel Tuner's `RegisterObserver` writes ``num_regs`` into each entry: the run's registers, not a
    parameter; a value that is no number of registers is named."""
    observed = {k: {**e, "num_regs": 40} for k, e in CACHE["cache"].items()}
    data = read_kernel_tuner(_write(tmp_path, "regs.json", {**CACHE, "cache": observed}))
    assert {r.resources.registers_per_thread for r in data.runs} == {40}
    assert all("num_regs" not in r.params for r in data.runs)
    observed["32,4,1,0"] = {**observed["32,4,1,0"], "num_regs": 0}
    with pytest.raises(MeasurementError, match="'32,4,1,0': num_regs = 0 is not a number of registers per thread"):
        read_kernel_tuner(_write(tmp_path, "bad.json", {**CACHE, "cache": observed}))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"Metadata": {"TimeUnit": "Fortnights"}}, "Metadata.TimeUnit = 'Fortnights' is none of Nanoseconds"),
        ({"Results": {"a": 1}}, "Results is not a list of configurations"),
        ({"Results": [{"Configuration": {"BLOCK_SIZE_X": 32}, "Status": "Ok"}]}, "result 0: its Configuration is not"),
        ({"Results": [_ktt_result(32, 4, 1, duration_us=0.0)]}, "result 0: time 0.0 is not a positive number of micro"),
    ],
)
def test_malformed_ktt_output_names_the_problem(tmp_path, change, message):
    with pytest.raises(MeasurementError, match=message):
        read_kernel_tuner(_write(tmp_path, "bad.json", {**KTT_OUTPUT, **change}))


@pytest.mark.parametrize(
    "data, message",
    [
        ({"cache": {"a": {"block_size_x": 32, "time": -1.0}}}, "time -1.0 is not a positive number"),
        ({"cache": {"a": {"block_size_x": 32}}}, "has no 'time'"),
        ({"results": []}, "no 'cache' table"),
        ("{not json", "invalid JSON"),
    ],
)
def test_malformed_caches_name_the_problem(tmp_path, data, message):
    with pytest.raises(MeasurementError, match=message):
        read_kernel_tuner(_write(tmp_path, "bad.json", data))


def test_missing_file_and_spec_without_kernel_for(tmp_path):
    with pytest.raises(MeasurementError, match="does not exist"):
        read_kernel_tuner(tmp_path / "none.json")
    (tmp_path / "s.py").write_text("lattice_updates = 10\n")
    with pytest.raises(PerfError, match="lacks `kernel_for`"):
        load_tunable_spec(tmp_path / "s.py")


def test_no_row_matches_the_fixed_parameters(tmp_path, spec):
    data = {"cache": {"a": _entry(32, 4, 1, 1, 0.1)}}
    with pytest.raises(MeasurementError, match="no measured configuration matches"):
        variants(read_kernel_tuner(_write(tmp_path, "c.json", data)), spec)


def test_cli_validate_on_a_cache_with_a_model(tmp_path, capsys):
    cache = _write(tmp_path, "c.json", CACHE)
    (tmp_path / "spec.py").write_text(SPEC)
    assert (
        main(
            [
                "validate",
                str(cache),
                "--device",
                "A100-PCIe-40GB",
                "--spec",
                str(tmp_path / "spec.py"),
                "--model",
                "throughput",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "spec (2 variants)" in out and "5 measured candidates" in out and "Spearman" in out
    assert (
        main(["validate", str(cache), "--device", "A100", "--spec", str(tmp_path / "spec.py"), "--align", "interior"])
        == 2
    )


def test_the_a100_convolution_cache_and_its_flat_extract_agree():
    spec = load_tunable_spec(ROOT / "validation/a100_convolution/convolution.py")
    from_cache = variants(read_kernel_tuner(SHARED / "a100_convolution15_kernel_tuner_cache.json.gz"), spec)
    from_csv = variants(read_kernel_tuner(SHARED / "a100_convolution15_noshmem.csv"), spec)
    assert len(from_cache) == len(from_csv) == 32  # tile_size_x, tile_size_y in 1..4, read_only 0/1
    assert sum(len(v.dataset.rows) for v in from_cache) == sum(len(v.dataset.rows) for v in from_csv) == 1789


def test_ktt_shared_memory_convolution_l2_loads_on_the_2080_ti():
    """KTT's counters of the shared-memory convolution: its copy's L2 loads are the sectors of each block's
    tile plus halo, and the description's shared memory is KTT's per block size (PADDING = 0)."""
    import pystencils_perf as pp

    data = read_kernel_tuner(SHARED / "rtx2080ti_convolution15_ktt_counters.csv")
    spec = load_tunable_spec(ROOT / "validation/rtx2080ti_convolution/convolution_shmem.py")
    groups = {tuple(sorted(g.params.items())): g for g in variants(data, spec)}
    assert len(groups) == 94 and all("PADDING" not in g for g in groups)  # 47 tile sizes x READ_ONLY; PADDING = 0 only
    with open(SHARED / "rtx2080ti_convolution15_ktt_counters.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["PADDING"] == "0"]
    models = {}
    for row in rows:
        tile = (int(row["TILE_SIZE_X"]), int(row["TILE_SIZE_Y"]))
        if tile not in models:
            models[tile] = spec.kernel_for({"TILE_SIZE_X": tile[0], "TILE_SIZE_Y": tile[1], "READ_ONLY": 0}).model()
        model = models[tile]
        block = (int(row["BLOCK_SIZE_X"]), int(row["BLOCK_SIZE_Y"]), 1)
        assert model.shared_memory_for(block) == int(row["shared_mem_bytes"]), row
    tile = groups[(("READ_ONLY", 0), ("TILE_SIZE_X", 1), ("TILE_SIZE_Y", 1))]
    measured = {r.launch.block: r.values["l2_load"] for r in tile.dataset.rows}
    blocks = [(32, 32, 1), (16, 16, 1), (128, 4, 1)]
    ranking = pp.rank(spec.kernel_for(tile.params), "RTX 2080 Ti", blocks=blocks, folds=[(1, 1, 1)])
    for c in ranking.candidates:
        assert c.metrics.l2_load_bytes_per_lup == pytest.approx(measured[c.launch.block], rel=0.05), c.launch.block


@pytest.mark.parametrize(
    "header, warning",
    [
        ({}, "c.json does not record its problem size: check the SPEC's lattice_updates = 16777216"),
        ({"problem_size": [N, N]}, None),
        (
            {"problem_size": [1000, 1000]},
            "c.json was tuned with problem_size [1000, 1000] (1000000 points), but the "
            "SPEC's lattice_updates = 16777216",
        ),
        (
            {"problem_size": [N, N], "device_name": "NVIDIA RTX A4000"},
            "c.json was measured on NVIDIA RTX A4000, not on A100-PCIe-40GB",
        ),
    ],
)
def test_cli_validate_warns_where_the_cache_does_not_match(tmp_path, capsys, header, warning):
    """The cache records its problem size and GPU: a SPEC or device that does not match is one line on stderr."""
    cache = _write(tmp_path, "c.json", {**CACHE, **header})
    (tmp_path / "spec.py").write_text(SPEC)
    assert main(["validate", str(cache), "--device", "A100-PCIe-40GB", "--spec", str(tmp_path / "spec.py")]) == 0
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == (warning is not None)
    assert all(line.startswith(f"pystencils-perf: warning: {warning}") for line in warnings)


def test_run_to_run_spread_is_slowest_over_fastest_run_per_configuration():
    """The noise reported beside every accuracy figure: configurations without repeated runs (or failed) have none."""
    cache = {
        "cache": {
            "a": {"times": [2.0, 2.5, 2.2]},
            "b": {"times": [4.0]},
            "c": {"time": "RuntimeFailedConfig"},
            "d": {"times": []},
        }
    }
    assert run_to_run_spreads(cache) == [pytest.approx(0.25), 0.0]
