"""Trace-driven simulation of one SM's resident blocks (Wang et al., HPCA'19; SEED_MODELS.md 2(f)).

What is simulated, and the choices 002 leaves open:

- **Warps and program order.** The warps of one SM's resident blocks (blocks per
  SM from the core's occupancy) issue their loads in harvested order, then their
  arithmetic, then their stores: the stores consume the loaded values.
  Loads do not block; the arithmetic waits for the last load to return (a
  scoreboard), stores are fire-and-forget.
- **Discrete-event scheduler (W14).** The warp with the smallest ready time issues
  next (ties by age). Resources, each with a time it is free again: the SM's
  issue slots (4 schedulers), its L1 data path (bank-conflict wavefronts, as the
  core's L1 model counts them), its FP pipe, and the chip-wide L2 and DRAM
  bandwidths, locked for bytes / bandwidth per transfer (2(f) item 4, the
  "more defensible" variant: sharing emerges instead of scaling latencies).
  A load completes at the start of its service at the deepest level it reached
  plus that level's latency (`latencies.py`).
- **Caches.** Per SM a sectored L1 (device capacity, line and sector; loads only,
  write-through, stores do not allocate); one sectored write-back L2 of the
  device's effective capacity; DRAM last. Both LRU, fully associative (`cache.py`).
- **L2 shared by a wave (2(f) item 3).** Of the two options, this feeds the L2 the
  N_SM interleaved copies with shifted block ids: every SM of the wave replays
  the simulated SM's schedule on its own blocks (block b of a wave runs on SM
  b mod N_SM) through its own L1 into the shared L2. An L2 share of L2/N_SM
  would drop the reuse between neighbouring blocks, which run on different SMs.
  Timing is simulated for one SM; the others are assumed to keep its pace, and
  their traffic occupies the chip-wide L2 and DRAM resources with it.
- **Representative waves.** A full wave near the middle of the launch, with the
  launch's share of active threads, is measured after `warmup_waves` waves
  before it; nothing else of the grid is simulated. A warm-up wave runs SM 0
  alone through the scheduler (its traffic counted once per SM on the chip-wide
  resources) and then leaves every SM's lines of the wave in the L2, in the order
  of their first use: half the cost of a replayed wave, with the pipeline and the
  L2 in steady state when the measured wave starts (the other SMs' L1s start it cold).
- **Scaling (W8, Eq. 8).** T_kernel = T_pipeline * ceil(blocks / N_SM) / N_awg,
  then seconds via the core clock.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

import pystencils_perf
from pystencils_perf.devices import get_device
from pystencils_perf.errors import ConfigurationError, PerfError
from pystencils_perf.estimate.addresses import compile_kernel
from pystencils_perf.estimate.footprint_enum import ThreadSet, count_points
from pystencils_perf.estimate.volumes import occupancy
from pystencils_perf.kernel import KernelModel
from pystencils_perf.launch import LaunchConfig
from pystencils_perf.predict import Prediction

from .cache import SectoredLRU
from .latencies import MemoryLatencies, latencies_for
from .trace import WaveTrace, field_bases_bytes, wave_trace

#: a resource busy for at least this fraction of the simulated time is named the limiter, else "latency"
LIMITER_BUSY_FRACTION = 0.8


@dataclass(frozen=True)
class SimulationOptions:
    """How much of the launch to simulate, and the latency table (None: the built-in one of the device)."""

    warmup_waves: int = 1
    measured_waves: int = 1
    latencies: MemoryLatencies | None = None

    def __post_init__(self):
        if self.warmup_waves < 0 or self.measured_waves < 1:
            raise ConfigurationError(
                f"tracesim needs warmup_waves >= 0 and measured_waves >= 1, got {self.warmup_waves} and {self.measured_waves}"
            )


@dataclass(frozen=True)
class SimulationResult:
    """Simulated volumes (named as the analytic estimator's metrics) and the predicted time of one launch."""

    launch: LaunchConfig
    device: str
    l1_cycles_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    blocks_per_sm: int
    occupancy_limited_by: str
    wave_blocks: int
    grid: tuple[int, int, int]
    #: T_pipeline: core cycles of one measured wave (mean over the measured waves)
    pipeline_cycles: float
    #: Eq. 8: the whole kernel, and per lattice update of the kernel
    kernel_seconds: float
    seconds_per_lup: float
    #: per resource, its busy time scaled like the kernel time, per lattice update
    busy_seconds_per_lup: dict[str, float]
    limiter: str
    simulated_waves: int
    simulated_lattice_updates: int

    @property
    def lups_per_second(self) -> float:
        return 1.0 / self.seconds_per_lup

    def prediction(self) -> Prediction:
        """The core's `Prediction`: simulated throughput, the limiter, every resource's time per LUP and the
        simulated total (also under ``"latency"`` when no resource is busy enough to be the limiter)."""
        times = dict(self.busy_seconds_per_lup)
        times["simulated"] = self.seconds_per_lup
        times.setdefault(self.limiter, self.seconds_per_lup)
        return Prediction(self.lups_per_second, self.limiter, times)


@dataclass
class _Resources:
    """When each resource is free again (core cycles); the SM's own, and the chip's L2 and DRAM."""

    issue: float = 0.0
    l1: float = 0.0
    fp: float = 0.0
    l2: float = 0.0
    dram: float = 0.0


@dataclass
class _Tally:
    """Counts over the measured waves: sectors of all SMs, busy cycles and L1 cycles of the simulated SM."""

    l2_load_sectors: int = 0
    l2_store_sectors: int = 0
    dram_load_sectors: int = 0
    dram_store_sectors: int = 0
    lattice_updates: int = 0
    sm_lattice_updates: int = 0
    l1_cycles: float = 0.0
    busy: dict = field(default_factory=lambda: dict.fromkeys(("issue", "L1", "FP", "L2", "DRAM"), 0.0))
    pipeline_cycles: float = 0.0
    waves: int = 0


@dataclass(frozen=True)
class _Costs:
    """Cycles per unit of work of each resource."""

    issue: float  # per warp instruction
    l2_per_sector: float  # chip-wide L2 bandwidth
    dram_per_sector: float
    fp_per_flop: float  # per SM
    latencies: MemoryLatencies

    @staticmethod
    def of(device, model: KernelModel, latencies: MemoryLatencies) -> _Costs:
        sector, clock = device.l1_sector_bytes, device.clock_ghz
        double = max((f.element_bytes for f in model.fields), default=8) >= 8
        peak = device.fp64_peak_gflops if double else device.fp32_peak_gflops
        return _Costs(
            issue=1.0 / latencies.warp_schedulers_per_sm,
            l2_per_sector=sector * clock / device.l2_bandwidth_gbs,
            dram_per_sector=sector * clock / device.dram_bandwidth_gbs,
            fp_per_flop=device.sm_count * clock / peak,
            latencies=latencies,
        )


class _Machine:
    """The caches of every SM and the shared L2, and the resources of the simulated SM (SM 0)."""

    def __init__(self, device, costs: _Costs):
        self.sm_count = device.sm_count
        sector = device.l1_sector_bytes
        self.l1 = [SectoredLRU(device.l1_capacity_bytes, device.l1_line_bytes, sector) for _ in range(device.sm_count)]
        self.l2 = SectoredLRU(device.l2_effective_capacity_bytes, device.l1_line_bytes, sector, device.dram_fetch_bytes)
        self.costs = costs
        self.free = _Resources()
        self.wave_end = 0.0  # when the last simulated wave ended (its traffic drained)
        self.slot_free: list[float] = []  # per block slot of SM 0, when its last block finished
        self.events = 0

    def _copies(self, rows: list[int], everyone: bool) -> tuple[list[tuple[int, int]], int]:
        """The (SM, warp row) pairs one event replays, and by how much their traffic counts.

        Every SM's copy, starting at a rotating SM (which copy first fills a shared
        line, and so sees the DRAM latency, does not always favour the simulated SM);
        or, for a warm-up wave, SM 0's alone with its traffic counted once per SM.
        """
        if not everyone:
            return [(0, rows[0])], len(rows)
        k = self.events % len(rows)
        self.events += 1
        return [(sm, rows[sm]) for sm in range(k, len(rows))] + [(sm, rows[sm]) for sm in range(k)], 1

    def load(self, trace: WaveTrace, i: int, rows: list[int], t: float, tally: _Tally | None) -> tuple[float, float]:
        """Warp instruction `i` (a load) of the SMs' warps `rows` issued at `t`; (next issue, completion) of SM 0's warp."""
        tr = trace.loads[i]
        starts, lines, masks, l2 = tr.starts, tr.lines, tr.sector_masks, self.l2
        l2_sectors = dram_sectors = own_l2 = own_dram = 0
        copies, weight = self._copies(rows, tally is not None)
        for sm, row in copies:
            missed_lines, missed_masks, sm_l2 = self.l1[sm].load_range(lines, masks, starts[row], starts[row + 1])
            sm_dram = l2.load_range(missed_lines, missed_masks, 0, len(missed_lines))[2] if sm_l2 else 0
            if sm == 0:
                own_l2, own_dram = sm_l2, sm_dram
            l2_sectors += sm_l2 * weight
            dram_sectors += sm_dram * weight
        c, free, lat = self.costs, self.free, self.costs.latencies
        issued = max(t, free.issue)
        free.issue = issued + c.issue
        start = max(issued, free.l1)
        l1_cycles = tr.l1_cycles[rows[0]]
        free.l1 = start + l1_cycles
        done = start + lat.l1_hit_cycles
        if l2_sectors:
            start = max(start, free.l2)
            free.l2 = start + l2_sectors * c.l2_per_sector
            done = max(done, start + lat.l2_hit_cycles) if own_l2 else done
        if dram_sectors:
            start = max(start, free.dram)
            free.dram = start + dram_sectors * c.dram_per_sector
            done = max(done, start + lat.dram_cycles) if own_dram else done
        if tally is not None:
            tally.l2_load_sectors += l2_sectors
            tally.dram_load_sectors += dram_sectors
            tally.l1_cycles += l1_cycles
            tally.busy["issue"] += c.issue
            tally.busy["L1"] += l1_cycles
            tally.busy["L2"] += l2_sectors * c.l2_per_sector
            tally.busy["DRAM"] += dram_sectors * c.dram_per_sector
        return issued + 1, done

    def store(self, trace: WaveTrace, i: int, rows: list[int], t: float, tally: _Tally | None) -> float:
        """A store of the SMs' warps `rows` at `t`: write-through to L2, write-back to DRAM; SM 0's next issue time."""
        tr = trace.stores[i]
        starts, lines, masks, l2 = tr.starts, tr.lines, tr.sector_masks, self.l2
        l2_sectors = dram_sectors = 0
        copies, weight = self._copies(rows, tally is not None)
        for _, row in copies:
            a, b = starts[row], starts[row + 1]
            l2_sectors += sum(m.bit_count() for m in masks[a:b]) * weight
            dram_sectors += l2.store_range(lines, masks, a, b) * weight
        c, free = self.costs, self.free
        issued = max(t, free.issue)
        free.issue = issued + c.issue
        if l2_sectors:
            start = max(issued, free.l2)
            free.l2 = start + l2_sectors * c.l2_per_sector
            if dram_sectors:
                free.dram = max(start, free.dram) + dram_sectors * c.dram_per_sector
        if tally is not None:
            tally.l2_store_sectors += l2_sectors
            tally.dram_store_sectors += dram_sectors
            tally.busy["issue"] += c.issue
            tally.busy["L2"] += l2_sectors * c.l2_per_sector
            tally.busy["DRAM"] += dram_sectors * c.dram_per_sector
        return issued + 1

    def compute(self, flops: float, t: float, tally: _Tally | None) -> float:
        """SM 0's warp's arithmetic on the FP pipe from `t`; when its result is ready."""
        start = max(t, self.free.fp)
        busy = flops * self.costs.fp_per_flop
        self.free.fp = start + busy
        if tally is not None:
            tally.busy["FP"] += busy
        return start + busy + self.costs.latencies.arithmetic_cycles

    def fill_l2(self, trace: WaveTrace) -> None:
        """After a warm-up wave: every SM's lines of the wave into the L2, loads then stores, each line once
        in the order of its first use (what the other SMs' copies would have left there)."""
        for instructions, fill in ((trace.loads, self.l2.load_range), (trace.stores, self.l2.store_range)):
            if not instructions:
                continue
            lines = np.concatenate([np.asarray(tr.lines, dtype=np.int64) for tr in instructions])
            masks = np.concatenate([np.asarray(tr.sector_masks, dtype=np.int64) for tr in instructions])
            distinct, first, inverse = np.unique(lines, return_index=True, return_inverse=True)
            merged = np.zeros(len(distinct), dtype=np.int64)
            np.bitwise_or.at(merged, inverse, masks)
            order = np.argsort(first)
            fill(distinct[order].tolist(), merged[order].tolist(), 0, len(distinct))

    def run_wave(self, trace: WaveTrace, flops_per_lup: float, tally: _Tally | None) -> None:
        """Simulate one wave on SM 0 (W14). A block of this wave starts when the block before it in the same
        slot of SM 0 has finished, so waves overlap as on the GPU; the wave ends when its last warp has
        finished and the L2 and DRAM traffic queued so far has drained."""
        wpb, n_sm, n_blocks = trace.warps_per_block, self.sm_count, trace.blocks
        slots = -(-n_blocks // n_sm)
        self.slot_free += [self.wave_end] * (slots - len(self.slot_free))
        warps, slot_of = [], []  # SM 0's warps: the rows of every SM's copy, SM 0 first
        for slot in range(slots):
            for w in range(wpb):
                warps.append([(sm + slot * n_sm) * wpb + w for sm in range(n_sm) if sm + slot * n_sm < n_blocks])
                slot_of.append(slot)
        n_loads, n_stores = len(trace.loads), len(trace.stores)
        pc = [0] * len(warps)
        pending = [self.slot_free[s] for s in slot_of]
        heap = [(pending[w], w) for w in range(len(warps))]
        slot_finish = self.slot_free[:slots]
        while heap:
            t, w = heapq.heappop(heap)
            rows, step = warps[w], pc[w]
            if step < n_loads:
                t, done = self.load(trace, step, rows, t, tally)
                pending[w] = max(pending[w], done)
            elif step == n_loads:
                t = self.compute(flops_per_lup * trace.lattice_updates[rows[0]], max(t, pending[w]), tally)
            else:
                t = self.store(trace, step - n_loads - 1, rows, t, tally)
            pc[w] = step + 1
            if pc[w] <= n_loads + n_stores:
                heapq.heappush(heap, (t, w))
            else:
                slot_finish[slot_of[w]] = max(slot_finish[slot_of[w]], t, pending[w])
        self.slot_free[:slots] = slot_finish
        wave_end = max(max(slot_finish), self.free.l2, self.free.dram)
        if tally is not None:
            tally.pipeline_cycles += wave_end - self.wave_end
            tally.waves += 1
            tally.lattice_updates += sum(trace.lattice_updates)
            tally.sm_lattice_updates += sum(trace.lattice_updates[rows[0]] for rows in warps)
        self.wave_end = wave_end


#: how many full waves either side of the middle of the launch are considered as the measured wave
WAVE_SEARCH_RADIUS = 4


def _waves(
    compiled, block, grid, lattice_updates: int, wave_blocks: int, options: SimulationOptions
) -> tuple[list[int], list[int]]:
    """First block ids of the warm-up waves and of the measured waves.

    The measured waves are full waves near the middle of the launch whose share
    of active threads is closest to the whole launch's, so that Eq. 8 (every
    round like the simulated one) scales a representative round: a wave that
    happens to cover a row of mostly idle edge blocks would not be.
    """
    total_blocks = math.prod(grid)
    full = total_blocks // wave_blocks
    if full == 0:
        return [], [0]
    target = lattice_updates / total_blocks * wave_blocks
    last_first = full - options.measured_waves
    middle = max(0, min(full // 2, last_first))
    window = range(max(0, middle - WAVE_SEARCH_RADIUS), max(0, min(last_first, middle + WAVE_SEARCH_RADIUS)) + 1)

    def distance(first: int) -> float:
        threads = ThreadSet.linear_range(block, grid, first * wave_blocks, options.measured_waves * wave_blocks)
        return abs(count_points(compiled.points, threads) / options.measured_waves - target)

    first = min(window, key=lambda w: (distance(w), abs(w - middle)))
    measured = list(range(first, min(full, first + options.measured_waves)))
    warmup = list(range(max(0, first - options.warmup_waves), first))
    return [w * wave_blocks for w in warmup], [w * wave_blocks for w in measured]


def _model_for(model_or_kernel, launch: LaunchConfig, harvest_options: dict) -> KernelModel:
    """The kernel model folded as `launch` asks (an unfolded model is folded; a kernel is harvested first)."""
    model = pystencils_perf.harvest(model_or_kernel, **harvest_options)
    if model.fold == launch.fold:
        return model
    if model.fold != (1, 1, 1):
        raise ConfigurationError(f"kernel {model.name!r} is folded {model.fold}, the launch asks for {launch.fold}")
    return model.folded(launch.fold)


def simulate(
    model_or_kernel, launch, device, options: SimulationOptions = SimulationOptions(), **harvest_options
) -> SimulationResult:
    """Simulate `launch` (a `LaunchConfig` or a block triple) of a kernel or `KernelModel` on `device`.

    `harvest_options` (``domain_shape``, ``align``, ...) go to `pystencils_perf.harvest` for a kernel object.
    """
    launch = launch if isinstance(launch, LaunchConfig) else LaunchConfig(tuple(launch))
    dev = get_device(device)
    latencies = options.latencies or latencies_for(dev)
    model = _model_for(model_or_kernel, launch, harvest_options)
    block = launch.block
    occ = occupancy(model, launch.threads_per_block, dev, block)
    if occ.blocks_per_sm < 1:
        raise PerfError(
            f"kernel {model.name!r}, block {block}: no block fits on an SM of {dev.name} ({occ.limited_by})"
        )
    grid = launch.grid(model.work_items)
    total_blocks = math.prod(grid)
    wave_blocks = min(dev.sm_count * occ.blocks_per_sm, total_blocks)
    compiled = compile_kernel(model, block)
    fields = {f.name: f for f in model.fields}
    bases = field_bases_bytes(model.fields)
    machine = _Machine(dev, _Costs.of(dev, model, latencies))
    tally = _Tally()
    warmup, measured = _waves(compiled, block, grid, model.lattice_updates, wave_blocks, options)
    for first in warmup + measured:
        ids = np.arange(first, min(first + wave_blocks, total_blocks), dtype=np.int64)
        trace = wave_trace(compiled, fields, bases, block, grid, ids, dev)
        if first in measured:
            machine.run_wave(trace, model.flops_per_lup, tally)
        else:
            machine.run_wave(trace, model.flops_per_lup, None)
            machine.fill_l2(trace)
    return _result(model, launch, dev, occ, grid, wave_blocks, total_blocks, tally, len(warmup) + len(measured))


def _result(
    model, launch, dev, occ, grid, wave_blocks, total_blocks, tally: _Tally, simulated_waves
) -> SimulationResult:
    lups = max(tally.lattice_updates, 1)
    sector = dev.l1_sector_bytes
    wave_cycles = tally.pipeline_cycles / tally.waves
    # Eq. 8: T_kernel = T_pipeline * ceil(S_global / (S_local * N_SM)) / N_awg
    scale = math.ceil(total_blocks / dev.sm_count) / occ.blocks_per_sm / tally.waves
    hz = dev.clock_ghz * 1e9
    kernel_seconds = wave_cycles * math.ceil(total_blocks / dev.sm_count) / occ.blocks_per_sm / hz
    per_lup = kernel_seconds / model.lattice_updates
    busy = {name: cycles * scale / hz / model.lattice_updates for name, cycles in tally.busy.items()}
    busiest = max(busy, key=busy.get)
    limiter = busiest if busy[busiest] >= LIMITER_BUSY_FRACTION * per_lup else "latency"
    return SimulationResult(
        launch=launch,
        device=dev.name,
        l1_cycles_per_lup=tally.l1_cycles / max(tally.sm_lattice_updates, 1),
        l2_load_bytes_per_lup=tally.l2_load_sectors * sector / lups,
        l2_store_bytes_per_lup=tally.l2_store_sectors * sector / lups,
        dram_load_bytes_per_lup=tally.dram_load_sectors * sector / lups,
        dram_store_bytes_per_lup=tally.dram_store_sectors * sector / lups,
        blocks_per_sm=occ.blocks_per_sm,
        occupancy_limited_by=occ.limited_by,
        wave_blocks=wave_blocks,
        grid=grid,
        pipeline_cycles=wave_cycles,
        kernel_seconds=kernel_seconds,
        seconds_per_lup=per_lup,
        busy_seconds_per_lup=busy,
        limiter=limiter,
        simulated_waves=simulated_waves,
        simulated_lattice_updates=tally.lattice_updates,
    )
