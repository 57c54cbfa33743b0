"""The validations' registers per launch: the compiler's report on the caches' own kernel, per configuration."""

import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.measure.kernel_tuner import load_tunable_spec
from pystencils_perf.plugins import get_plugin_manager
from pystencils_perf.resources import AssemblyCounts

VALIDATION = Path(__file__).resolve().parents[1] / "validation"
EXTERNAL = VALIDATION / "data" / "external"
sys.path.insert(0, str(VALIDATION))
from convolution_summary import CompiledRegisters, KttRegisters, ktt_padding_0_rows  # noqa: E402

sys.path.remove(str(VALIDATION))
sys.path.insert(0, str(EXTERNAL))
from compile_convolution_registers import (  # noqa: E402
    FIXED,
    KEY,
    launch_fails,
    load_waits_per_thread,
    read_table,
    trips_per_thread,
)

sys.path.remove(str(EXTERNAL))


@pytest.fixture
def compiled_registers():
    pm = get_plugin_manager()
    plugin = CompiledRegisters()
    pm.register(plugin, name="test-compiled-registers")
    yield plugin
    pm.unregister(plugin)


@pytest.mark.parametrize(
    "table, cache",
    [
        ("convolution15_registers_sm_80.csv", "a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"),
        ("convolution15_registers_sm_86.csv", "a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"),
        ("convolution15_registers_sm_86.csv", "a6000_convolution15_kernel_tuner_cache_noshmem.json.gz"),
        ("convolution15_registers_gfx90a.csv", "mi250x_convolution15_kernel_tuner_cache_noshmem.json.gz"),
        ("convolution15_registers_gfx1032.csv", "w6600_convolution15_kernel_tuner_cache_noshmem.json.gz"),
        ("convolution15_registers_gfx1100.csv", "w7800_convolution15_kernel_tuner_cache_noshmem.json.gz"),
    ],
)
def test_every_measured_configuration_has_its_compiler_report(table, cache):
    rows = read_table(EXTERNAL / table)
    with gzip.open(EXTERNAL / cache, "rt") as fh:
        configurations = {
            tuple(int(e[k]) for k in KEY)
            for e in json.load(fh)["cache"].values()
            if all(e.get(k) == v for k, v in FIXED.items())
        }
    assert configurations <= set(rows)
    assert all(0 < r.registers_per_thread <= 512 for r in rows.values())


def test_the_measured_kernels_launches_get_their_own_registers_and_spills(compiled_registers):
    """A 4x4 tile with read_only: in blocks of 16 x 8 threads the kernel spills 21 kB per thread (the A100 cache
    measured it at 32 ms, the slowest of its launches); in 128 x 4 it needs 255 registers for 512 threads,
    more than an SM has, and the cache reports that launch as failed."""
    spec = load_tunable_spec(VALIDATION / "a100_convolution" / "convolution.py")
    kernel = spec.kernel({"tile_size_x": 4, "tile_size_y": 4, "read_only": 1})
    table = read_table(EXTERNAL / "convolution15_registers_sm_80.csv")
    ranking = pp.rank(kernel, "A100", blocks=[(16, 8, 1), (128, 4, 1)], folds=[(1, 1, 1)])
    spilling = ranking.candidates[0]
    assert spilling.launch.block == (16, 8, 1)
    assert spilling.metrics.registers_per_thread == table[(16, 8, 4, 4, 1)].registers_per_thread
    assert spilling.metrics.spill_store_bytes_per_lup == table[(16, 8, 4, 4, 1)].spill_store_bytes / 16
    assert spilling.metrics.spill_level == "DRAM"
    assert launch_fails(table[(128, 4, 4, 4, 1)].registers_per_thread, 512, pp.get_device("A100"))
    [(launch, reason)] = ranking.rejected
    assert launch.block == (128, 4, 1) and reason.startswith("occupancy 0")
    assert "registers per launch (its block size compiled in)" in ranking.resources_note


@pytest.mark.parametrize(
    "device, table",
    [
        ("A100", "sm_80"),
        ("RTX-A4000", "sm_86"),
        ("MI250X", "gfx90a"),
        ("W6600", "gfx1032"),
        ("W7800", "gfx1100"),
        ("H100", "sm_90"),
        ("V100", None),
    ],
)
def test_each_gpu_reads_its_own_architectures_table(device, table):
    path = CompiledRegisters().table_for(pp.get_device(device))
    assert (path.name if path else None) == (f"convolution15_registers_{table}.csv" if table else None)


@pytest.mark.parametrize(
    "device, table",
    [
        ("A100", "sm_80"),
        ("H200", "sm_90"),
        ("W6600", "gfx1032"),
        ("MI250X", "gfx90a"),
        ("W7800", "gfx1100"),
        ("RTX-A4000", "sm_86"),
        ("V100", None),
    ],
)
def test_a_shared_memory_kernel_reads_the_table_of_its_own_code(device, table):
    """The shared-memory variant compiles to other registers than the kernel without it: its own table, where one
    was compiled for the architecture, else none (not the other variant's)."""
    path = CompiledRegisters().table_for(pp.get_device(device), shared_memory=True)
    assert (path.name if path else None) == (f"convolution15_shmem_registers_{table}.csv" if table else None)
    if path:
        rows = read_table(path)
        assert rows and all(0 < r.registers_per_thread <= 512 for r in rows.values())


def test_ktts_launches_take_the_compiled_spills_where_the_compile_has_their_registers():
    """KTT's counters name each binary's registers, not its spills: those come from compiling its kernel, and only
    where the compile holds the binary's registers (blocks 16x8 with a 4x3 tile: the binary held 255 registers,
    the compile 253, so that compile does not stand in for it)."""
    plugin = KttRegisters(ktt_padding_0_rows())
    heavy, refitted = (16, 8, 3, 6, 0), (16, 8, 4, 3, 0)
    assert plugin.registers[heavy] == plugin.registers[refitted] == 255
    assert plugin.spills[heavy][0] > 7000 and refitted not in plugin.spills
    spec = load_tunable_spec(VALIDATION / "rtx2080ti_convolution" / "convolution_shmem.py")
    kernel = spec.kernel({"TILE_SIZE_X": 3, "TILE_SIZE_Y": 6, "READ_ONLY": 0, "PADDING": 0})
    launch = LaunchConfig((16, 8, 1), (1, 1, 1))
    usage = plugin.perf_launch_resources(kernel, None, [launch], pp.get_device("RTX-2080-Ti"))[launch]
    assert (usage.registers_per_thread, usage.spill_store_bytes) == (255, plugin.spills[heavy][0])


def test_ktts_launches_take_the_shared_loads_their_compiled_code_issues():
    """Blocks 48x4 with 4x6 tiles: the compiled code reloads every tap of its 24 outputs (225 each), where the
    description's thread loads its 2100 distinct values once; blocks 2x32 with 8x3 tiles load their 1305 distinct
    values once, as described (`rtx2080ti_convolution/shared_wavefronts.md`)."""
    plugin = KttRegisters(ktt_padding_0_rows())
    assert plugin.shared_loads[(48, 4, 4, 6, 0)] == 24 * 225
    assert plugin.shared_loads[(2, 32, 8, 3, 0)] == 1305
    spec = load_tunable_spec(VALIDATION / "rtx2080ti_convolution" / "convolution_shmem.py")
    kernel = spec.kernel({"TILE_SIZE_X": 4, "TILE_SIZE_Y": 6, "READ_ONLY": 0, "PADDING": 0})
    launch = LaunchConfig((48, 4, 1), (1, 1, 1))
    usage = plugin.perf_launch_resources(kernel, None, [launch], pp.get_device("RTX-2080-Ti"))[launch]
    assert usage.shared_load_words_per_thread == 24 * 225


def test_a_rolled_filter_loop_counts_once_per_trip():
    """Code that kept the 15 x 15 loop rolled runs its body as often as a thread's FMAs (225 per tile point) fill
    it: a body of 450 FMAs runs 8 times for a 4 x 4 tile; unrolled code runs once; a loop without FMAs has no
    trip count to give."""
    counts = AssemblyCounts(
        waits=10, loads=20, spill_store_bytes=8, spill_load_bytes=4, fma_instructions=450, looped=True
    )
    assert trips_per_thread(counts, 16) == 8.0
    assert trips_per_thread(replace(counts, looped=False), 16) == 1.0
    with pytest.raises(SystemExit, match="no FMA"):
        trips_per_thread(replace(counts, fma_instructions=0), 16)


def test_a_copy_loop_leaves_the_waits_unknown():
    """The shared-memory copy's loop runs as often as the thread's index says, which no FMA count tells: its
    waits per thread are unknown (the model counts them itself), where a rolled filter loop's are its body's
    times its trips; the table keeps an unknown as an empty cell."""
    counts = AssemblyCounts(
        waits=10, loads=20, spill_store_bytes=8, spill_load_bytes=4, fma_instructions=450, looped=True
    )
    assert load_waits_per_thread(counts, 8.0) == 80.0
    assert load_waits_per_thread(replace(counts, loop_loads_without_fma=True), 1.0) is None
