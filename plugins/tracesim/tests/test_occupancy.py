"""Eqs. 1-7 (W1-W7): the occupancy-calculator checks of SEED_MODELS.md 2(d), and agreement with the core's rule."""

import itertools

import pytest
from pystencils_perf_tracesim.occupancy import (
    KEPLER_CC30,
    MAXWELL_CC50,
    OccupancyLimits,
    active_work_groups,
)

from pystencils_perf import get_device
from pystencils_perf.errors import PerfError
from pystencils_perf.estimate.volumes import occupancy
from pystencils_perf.kernel import KernelModel


def test_kepler_256_threads_20_registers():
    awg = active_work_groups(KEPLER_CC30, 256, 20)
    assert (awg.active, awg.by_architecture, awg.by_registers) == (8, 8, 10)


def test_maxwell_256_threads_40_registers_12_kb():
    awg = active_work_groups(MAXWELL_CC50, 256, 40, 12 * 1024)
    assert (awg.active, awg.by_architecture, awg.by_registers, awg.by_shared_memory) == (5, 8, 6, 5)


def test_too_many_registers_or_shared_memory_allow_no_work_group():
    assert active_work_groups(KEPLER_CC30, 256, 64).active == 0
    assert active_work_groups(KEPLER_CC30, 256, 20, 64 * 1024).active == 0


@pytest.mark.parametrize("name", ["V100", "A100", "H100"])
def test_agrees_with_the_core_occupancy(name):
    device = get_device(name)
    limits = OccupancyLimits.of_device(device)
    for threads, registers, shared in itertools.product(
        (32, 96, 128, 256, 512, 1024), (0, 24, 40, 64, 128), (0, 4096, 40000)
    ):
        model = KernelModel(
            "k", (), (), (1, 1, 1), 1, registers_per_thread=registers or None, shared_memory_bytes=shared
        )
        core = occupancy(model, threads, device).blocks_per_sm
        assert active_work_groups(limits, threads, registers, shared).active == core, (threads, registers, shared)


def test_bad_work_group_size():
    with pytest.raises(PerfError, match="positive work-group size"):
        active_work_groups(KEPLER_CC30, 0, 20)
