"""Launches the hardware cannot run are rejected with the limit they break (issue 26, legality)."""

from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pystencils_perf.devices import get_device, list_devices
from pystencils_perf.candidates import perf_check_candidate
from pystencils_perf.launch import LaunchConfig, grid_limits

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Space:
    """What the check reads of a kernel model: its iteration space, and no compiled resources."""

    work_items: tuple[int, int, int]
    registers: int | None = None
    shared_memory_bytes: int = 0
    shared_memory_is_static: bool = False
    shared_arrays: tuple = ()

    def registers_for(self, fold, block=None):
        return self.registers

    def shared_memory_for(self, block):
        return self.shared_memory_bytes

    def shared_arrays_for(self, block):
        return ()

    def why_not_foldable(self):
        return None


DEVICES = [get_device(name) for name in list_devices()]
powers = st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048])


def _register_occupancy(registers: int, threads: int, device) -> int:
    """Blocks per SM the register file allows: registers allocated per warp in the device's units (as NVIDIA's
    occupancy calculator does)."""
    warps = -(-threads // device.warp_size)
    per_warp = -(-registers * device.warp_size // device.register_allocation_unit) * device.register_allocation_unit
    return device.registers_per_sm // (per_warp * warps)


@settings(max_examples=300, deadline=None)
@given(
    device=st.sampled_from(DEVICES),
    items=st.tuples(*[st.integers(1, 10**9)] * 3),
    block=st.tuples(powers, powers, powers),
    fold=st.tuples(*[st.sampled_from([1, 2, 4])] * 3),
    registers=st.none() | st.integers(1, 600),
    shared=st.integers(0, 300 * 1024),
)
def test_no_accepted_launch_breaks_a_limit_and_every_rejection_names_one(device, items, block, fold, registers, shared):
    launch = LaunchConfig(block, fold)
    reason = perf_check_candidate(Space(items, registers, shared), launch, device)
    folded = tuple(-(-n // f) for n, f in zip(items, fold))
    grid = launch.grid(folded)
    broken = {
        "threads per block": launch.threads_per_block > device.max_threads_per_block,
        "block": any(b > m for b, m in zip(block, device.max_block_dim)),
        "fold": any(f > n for f, n in zip(fold, items)),
        "idle": any(b > t for b, t in zip(block, folded)),
        "grid": any(g > m for g, m in zip(grid, grid_limits(device).max_blocks))
        or any(g * b > m for g, b, m in zip(grid, block, grid_limits(device).max_threads or ())),
        "registers": registers is not None
        and (
            registers > device.max_registers_per_thread
            or _register_occupancy(registers, launch.threads_per_block, device) == 0
        ),
        "shared memory": shared > device.shared_memory_limit_per_block_bytes,
    }
    if reason is None:
        assert not any(broken.values()), (launch, items, device.name)
    else:
        assert any(broken.values())
        named = {
            "threads per block": "threads per block",
            "block": "block ",
            "fold": "fold ",
            "idle": "idle",
            "grid": "grid needs",
            "registers": "registers",
            "shared memory": "shared memory",
        }
        assert any(broken[k] and named[k] in reason for k in broken), reason


def test_a_grid_taller_than_cuda_allows_is_rejected():
    device = get_device("V100")
    space = Space((1024, 200000, 1))
    reason = perf_check_candidate(space, LaunchConfig((1024, 1, 1)), device)
    assert reason and "200000 blocks along y" in reason and "65535" in reason
    assert perf_check_candidate(space, LaunchConfig((32, 32, 1)), device) is None
    huge = Space((10**6,) * 3)  # the grid (62500, 62500, 125000) a 1e6^3 domain once got
    assert "250000 blocks along z" in perf_check_candidate(huge, LaunchConfig((16, 16, 4)), device)
    assert perf_check_candidate(Space((10**6, 10**6, 10**5)), LaunchConfig((16, 32, 2)), device) is None


def test_a_block_whose_registers_leave_no_room_has_occupancy_zero():
    device = get_device("V100")  # 65536 registers per SM, allocated per warp in units of 256
    space = Space((4096, 4096, 1), registers=65)
    # 65 x 992 threads = 64480 registers would fit, but a warp gets 65 x 32 = 2080 -> 2304, x 31 warps > 65536
    reason = perf_check_candidate(space, LaunchConfig((992, 1, 1)), device)
    assert reason.startswith("occupancy 0: 65 registers x 31 warps (2304 per warp")
    assert perf_check_candidate(Space((4096, 4096, 1), registers=64), LaunchConfig((992, 1, 1)), device) is None


def test_registers_are_checked_per_register_file_as_an_h100_refused_launches():
    """An SM's registers sit in four files, one per scheduler, and CUDA checks a block's warps rounded up to all
    four: our H100 cache of the convolution holds every launch the driver refused (145 of 1920) and its compiled
    registers; exactly those have no room. Seven of them (80x4 threads at 188 registers: 10 warps of 6144) fit
    the SM's 65536 registers unless the warps are rounded up to 12."""
    from pystencils_perf.measure.kernel_tuner import load_cache_json

    device = get_device("H100")
    cache = load_cache_json(ROOT / "validation/hopper/data/h100/convolution15_kernel_tuner_cache.json.gz")["cache"]
    refused = {key for key, e in cache.items() if e["time"] == "RuntimeFailedConfig"}
    no_room = {
        key
        for key, e in cache.items()
        if device.blocks_by_registers(e["num_regs"], e["block_size_x"] * e["block_size_y"]) == 0
    }
    assert len(refused) == 145 and no_room == refused
    assert device.blocks_by_registers(188, 320) == 0 and device.blocks_by_registers(168, 320) == 1
    reason = perf_check_candidate(Space((4096, 4096, 1), registers=188), LaunchConfig((80, 4, 1)), device)
    assert reason.startswith(
        "occupancy 0: 188 registers x 10 warps (6144 per warp, allocated in units of 256, spread over 4 register files)"
    )


def test_rdna_runs_a_workgroup_over_a_wgp():
    """RDNA's default WGP mode: a 1024-work-item block at 128 VGPRs (what hipcc gives the W6600 cache's guarded
    convolution) uses two CUs' registers and runs, as measured; at 129 VGPRs (144 allocated, in units of 16) it
    does not fit."""
    device = get_device("W6600")
    assert perf_check_candidate(Space((4096, 4096, 1), registers=128), LaunchConfig((1024, 1, 1)), device) is None
    reason = perf_check_candidate(Space((4096, 4096, 1), registers=129), LaunchConfig((1024, 1, 1)), device)
    assert reason.startswith("occupancy 0: 129 registers x 32 warps")


def test_shared_memory_is_limited_per_block_and_shared_per_sm():
    """A block may allocate less shared memory than its SM holds: 99 KiB on an RTX A4000 (of 100 KiB per SM), 64 KiB
    of an RDNA WGP's 128 KiB; the resident blocks share the SM's, and from compute capability 8.0 the runtime
    reserves 1 KiB per block, so two 50-KiB blocks do not fit an A4000's SM where they would fit without it."""
    from pystencils_perf.estimate.volumes import occupancy

    a4000, w6600 = get_device("RTX-A4000"), get_device("W6600")
    assert (
        perf_check_candidate(Space((4096, 4096, 1), shared_memory_bytes=99 * 1024), LaunchConfig((256, 1, 1)), a4000)
        is None
    )
    reason = perf_check_candidate(
        Space((4096, 4096, 1), shared_memory_bytes=99 * 1024 + 4), LaunchConfig((256, 1, 1)), a4000
    )
    assert reason == "101380 B shared memory exceed RTX-A4000's 101376 B per block"
    assert (
        perf_check_candidate(Space((4096, 4096, 1), shared_memory_bytes=65536), LaunchConfig((256, 1, 1)), w6600)
        is None
    )
    assert "65540 B shared memory exceed" in perf_check_candidate(
        Space((4096, 4096, 1), shared_memory_bytes=65540), LaunchConfig((256, 1, 1)), w6600
    )

    class Model:  # what occupancy reads of a kernel
        registers_per_thread = None
        fold = (1, 1, 1)

        def __init__(self, shared):
            self.shared_memory_bytes = shared

        def registers_for(self, fold, block=None):
            return None

        def shared_memory_for(self, block):
            return self.shared_memory_bytes

    assert occupancy(Model(65536), 256, w6600, (256, 1, 1)).blocks_per_sm == 2  # two workgroups share a WGP's LDS
    assert occupancy(Model(50 * 1024), 256, a4000, (256, 1, 1)).blocks_per_sm == 1  # 2 x (50 + 1) KiB > 100 KiB
    assert occupancy(Model(49 * 1024), 256, a4000, (256, 1, 1)).blocks_per_sm == 2


def test_hip_grids_are_limited_by_amds_runtime():
    """HIP allows 65536 blocks along y and z, one more than CUDA, and counts the grid in 32-bit thread counts."""
    mi210, v100 = get_device("MI210"), get_device("V100")
    tall = Space((1024, 65536, 1))
    assert perf_check_candidate(tall, LaunchConfig((1024, 1, 1)), mi210) is None
    assert "HIP" not in perf_check_candidate(tall, LaunchConfig((1024, 1, 1)), v100)
    wide = Space((2**32, 1, 1))
    reason = perf_check_candidate(wide, LaunchConfig((1024, 1, 1)), mi210)
    assert reason == f"the grid needs {2**32} threads along x, more than HIP's limit of {2**32 - 1} per dimension"
    assert perf_check_candidate(wide, LaunchConfig((1024, 1, 1)), v100) is None  # 2^22 blocks: CUDA launches them
