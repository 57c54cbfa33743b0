"""Data volumes per lattice update at every level, following Ernst et al. (JPDC 2023) sec. III.

L2 -> L1 loads with the block as L1's collaborative group (requested, compulsory and allocation volumes, and
L1's capacity misses); L1 -> L2 stores, written through; DRAM -> L2 loads with the wave of concurrently running
blocks as L2's group (what the previous wave shares and L2 still holds, `older_wave_hits` for the waves before
it, and the re-reads that miss for capacity, `reread_load`); L2 -> DRAM stores, the wave's unique store
footprint plus evictions; and, where the code was compiled per launch, the traffic of spilled registers on top
(`spills`). The formulas are `composition`'s, explained in docs/model/index.md ("The hardware metric
estimator"). Everything is averaged over representative blocks and waves away from the grid's edges and
returned in bytes per lattice update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernel import AccessKind, KernelModel
from ..metrics import Metrics
from . import composition
from .addresses import CompiledKernel, KeptByIdentity, compile_kernel
from .footprint_enum import ThreadSet, count_points, shifted_copies
from .l1 import block_requests
from .shared import shared_requests
from .spills import spill_traffic


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    limited_by: str


def occupancy(
    model: KernelModel, threads_per_block: int, device, block: tuple[int, int, int] | None = None
) -> Occupancy:
    """Resident blocks per SM from threads, and where known registers and shared memory (those of
    `block` where given: its own compiled code's registers, its shared memory; else the model's fixed part)."""
    warps = -(-threads_per_block // device.warp_size)
    limits = {
        "blocks": device.max_blocks_per_sm,
        "threads": device.max_threads_per_sm // (warps * device.warp_size),
    }
    registers = model.registers_for(model.fold, block) if block is not None else model.registers_per_thread
    if registers:
        limits["registers"] = device.blocks_by_registers(registers, threads_per_block)
    shared = model.shared_memory_for(block) if block is not None else model.shared_memory_bytes
    if shared:
        limits["shared memory"] = device.blocks_by_shared_memory(shared)
    limiter = min(limits, key=limits.get)
    return Occupancy(max(0, limits[limiter]), limiter)


def representative_blocks(grid) -> list[tuple[int, int, int]]:
    """Four neighbouring blocks in the middle of the grid (x and y neighbours)."""
    centre = [g // 2 for g in grid]
    out = []
    for dy in (0, 1):
        for dx in (0, 1):
            bid = (min(centre[0] + dx, grid[0] - 1), min(centre[1] + dy, grid[1] - 1), centre[2])
            if bid not in out:
                out.append(bid)
    return out


def representative_waves(grid, wave_blocks: int) -> list[int]:
    """First block ids of up to three full waves around the grid's centre block, each with a previous wave.

    Centred on the middle block (x, y and z), not on the middle of the launch:
    when the grid has few z layers of blocks (deep blocks), the launch's middle
    wave often starts a z layer, and its previous wave ends the one before at the
    opposite y edge; the two share nothing, and the wave carries the y edge's
    halo, which only a small share (1 / waves per layer) of the waves do.
    """
    total_blocks = math.prod(grid)
    n_full = total_blocks // wave_blocks
    if n_full < 2:
        return [0]
    gx, gy, gz = grid
    centre = ((gz // 2) * gy + gy // 2) * gx + gx // 2
    mid = centre // wave_blocks
    return sorted({min(max(k, 1), n_full - 1) * wave_blocks for k in (mid - 1, mid, mid + 1)})


#: footprints of thread sets (`FootprintCounter._parts`) kept for candidates with the same instructions: a SPEC's
#: variants that differ in ``read_only`` only compile to the same ones (`addresses.compile_kernel`)
_FOOTPRINTS = KeptByIdentity(4096)
#: the volumes of a candidate's waves, kept for another with the same instructions, device, block and L2
#: traffic (a sibling variant)
_WAVES = KeptByIdentity(256)


class FootprintCounter:
    """Footprints of one candidate through a backend, for blocks and waves alike.

    What a thread set touches, and how many granules a union of thread sets
    touches, is computed once and reused: the previous wave of one
    representative wave is the current wave of the one before, and
    representative blocks that are translates of each other share a count.
    """

    def __init__(self, compiled: CompiledKernel, fields: dict, backend):
        self.compiled, self.fields, self.backend = compiled, fields, backend
        self._counts = {}
        self._translates = {}
        self._shifts = {}

    def _parts(self, name, kind, threads, granule_bytes):
        instrs, field = self.compiled.for_field(name, kind), self.fields[name]
        return _FOOTPRINTS.get(
            (instrs, self.backend),
            _footprint_key(field, threads, granule_bytes),
            lambda: self.backend.touched(instrs, field, threads, granule_bytes),
        )

    def prefetch(self, thread_sets: list[ThreadSet], granule_bytes: int) -> None:
        """The footprints of `thread_sets` (waves of the candidate) by every array and kind, where not kept yet, in
        one call each where the backend takes several sets at once (``touched_sets``): the waves share their
        pieces' work."""
        touched_sets = getattr(self.backend, "touched_sets", None)
        if touched_sets is None:
            return
        for name, field in self.fields.items():
            for kind in AccessKind:
                instrs = self.compiled.for_field(name, kind)
                if not instrs:
                    continue
                keyed = [(_footprint_key(field, ts, granule_bytes), ts) for ts in thread_sets]
                missing = [(key, ts) for key, ts in keyed if not _FOOTPRINTS.holds((instrs, self.backend), key)]
                if not missing:
                    continue
                footprints = touched_sets(instrs, field, [ts for _, ts in missing], granule_bytes)
                for (key, _), footprint in zip(missing, footprints):
                    _FOOTPRINTS.get((instrs, self.backend), key, lambda footprint=footprint: footprint)

    def block(self, kind: AccessKind, block, bid, granule_bytes: int, skip: frozenset[str] = frozenset()) -> int:
        """Distinct granules one block touches; a translate of a block counted before reuses its count.

        If every instruction of a field runs on every thread of the block and all
        move by the same D bytes from block to block, the block's granules are
        those of any other such block shifted, up to ``D mod granule``: the count
        depends on that residue only. Interior blocks of big grids are such translates. The arrays in `skip`
        are left out.
        """
        threads = ThreadSet.single_block(block, bid)
        total = 0
        for name, field in self.fields.items():
            instrs = self.compiled.for_field(name, kind)
            if not instrs or name in skip:
                continue
            if (name, kind, bid) not in self._shifts:
                self._shifts[name, kind, bid] = _uniform_block_shift(instrs, block, bid)
            shift = self._shifts[name, kind, bid]
            if shift is None:
                total += self.backend.count_union([self._parts(name, kind, threads, granule_bytes)])
                continue
            key = (name, kind, granule_bytes, (field.element_bytes * shift) % granule_bytes)
            if key not in self._translates:
                self._translates[key] = self.backend.count_union([self._parts(name, kind, threads, granule_bytes)])
            total += self._translates[key]
        return total

    def overlap(self, kind: AccessKind, a: ThreadSet, b: ThreadSet, granule_bytes: int) -> int:
        """Granules touched by instructions of `kind` of both `a` and `b` (a wave and its previous wave)."""
        total = 0
        for name in self.fields:
            if self.compiled.for_field(name, kind):
                parts = (self._parts(name, kind, a, granule_bytes), self._parts(name, kind, b, granule_bytes))
                total += self.backend.count_overlap(*parts)
        return total

    def stores_beyond_loads(self, threads: ThreadSet, granule_bytes: int) -> int:
        """Granules `threads` store to that their own loads do not touch: the lines their stores add to a cache
        (an update in place stores into lines it loaded). Counted once per thread set: a wave is the next
        one's previous."""
        key = ("stores beyond loads", threads.key, granule_bytes)
        if key not in self._counts:
            total = self.union(AccessKind.STORE, [threads], granule_bytes)
            for name in self.fields:
                if self.compiled.for_field(name, AccessKind.STORE) and self.compiled.for_field(name, AccessKind.LOAD):
                    total -= self.backend.count_overlap(
                        self._parts(name, AccessKind.STORE, threads, granule_bytes),
                        self._parts(name, AccessKind.LOAD, threads, granule_bytes),
                    )
            self._counts[key] = total
        return self._counts[key]

    def union(self, kind: AccessKind, thread_sets: list[ThreadSet], granule_bytes: int) -> int:
        """Distinct granules touched by instructions of `kind` of all `thread_sets` together (bytes: x granule)."""
        key = (kind, tuple(ts.key for ts in thread_sets), granule_bytes)
        if key not in self._counts:
            total = 0
            for name in self.fields:
                if self.compiled.for_field(name, kind):
                    parts = [self._parts(name, kind, ts, granule_bytes) for ts in thread_sets]
                    total += self.backend.count_union(parts)
            self._counts[key] = total
        return self._counts[key]


def _footprint_key(field, threads: ThreadSet, granule_bytes: int) -> tuple:
    """What `_FOOTPRINTS` keeps a thread set's footprint of an instruction tuple by."""
    return field, threads.block, threads.grid, threads.key, granule_bytes


def _uniform_block_shift(instrs, block, bid) -> int | None:
    """Elements by which block `bid` moves every address of `instrs` relative to block 0, if they all move alike
    and every instruction runs on every thread of the block; else None."""
    copies = shifted_copies(instrs)  # a few groups of thousands of a tile's instructions
    moves = {coeffs[3:] for coeffs, _, _ in copies}
    if len(moves) != 1:
        return None
    for guards in {guards for _, guards, _ in copies}:
        if not any(all(_min_over_block(c, block, bid) >= 0 for c in conj) for conj in guards):
            return None
    return sum(c * b for c, b in zip(moves.pop(), bid))


def _min_over_block(form, block, bid) -> int:
    """Smallest value of an affine form over the threads of one block (a corner of the box)."""
    thread_part = sum(min(0, c * (n - 1)) for c, n in zip(form.coeffs[:3], block))
    return form.offset + thread_part + sum(c * b for c, b in zip(form.coeffs[3:], bid))


#: waves before a wave that `older_wave_hits` looks back to, at most (its previous one included)
OLDER_WAVES_LOOKED_AT = 8
#: how far past the L2 the current wave leaves `older_wave_hits` looks with a fitted hit curve: beyond twice that
#: room the fitted curves give under 1 % hits
OLDER_WAVE_RATIO_LOOKED_AT = 2.0


def older_wave_reuse(
    counter: FootprintCounter,
    block,
    grid,
    first: int,
    wave_blocks: int,
    granule_bytes: int,
    l2_left_bytes: float,
    ratio_looked_at: float,
) -> list[tuple[float, float]]:
    """What the wave from block `first` loads that each wave before its previous one loaded and no nearer wave did:
    ``(ratio, bytes)`` per wave back, where ``ratio`` is the waves back to it, loads and the lines their stores
    allocate, over the L2 the current wave leaves (`l2_left_bytes`). Ends at the first ratio past
    `ratio_looked_at`."""
    looked_at = min(OLDER_WAVES_LOOKED_AT, first // wave_blocks)
    if looked_at < 2 or l2_left_bytes <= 0:
        return []
    curr = ThreadSet.linear_range(block, grid, first, wave_blocks)
    waves = [ThreadSet.linear_range(block, grid, first - j * wave_blocks, wave_blocks) for j in range(1, looked_at + 1)]
    v_curr = counter.union(AccessKind.LOAD, [curr], granule_bytes)
    stores = counter.stores_beyond_loads(waves[0], granule_bytes)
    shared_before = counter.overlap(AccessKind.LOAD, curr, waves[0], granule_bytes)
    largest = counter.union(AccessKind.LOAD, [waves[0]], granule_bytes)
    room = ratio_looked_at * l2_left_bytes
    reuse = []
    for j in range(2, looked_at + 1):
        stores += counter.stores_beyond_loads(waves[j - 1], granule_bytes)
        largest = max(largest, counter.union(AccessKind.LOAD, [waves[j - 1]], granule_bytes))
        if (largest + stores) * granule_bytes > room:  # the union is no smaller: spare computing it
            break
        back = counter.union(AccessKind.LOAD, waves[:j], granule_bytes)
        if (back + stores) * granule_bytes > room:
            break
        shared = v_curr + back - counter.union(AccessKind.LOAD, [curr, *waves[:j]], granule_bytes)
        reuse.append(((back + stores) * granule_bytes / l2_left_bytes, float(shared - shared_before) * granule_bytes))
        shared_before = shared
    return reuse


def _ratio_looked_at(hit_curve) -> float:
    """How far past the L2 a wave leaves `older_wave_hits` looks (`OLDER_WAVE_RATIO_LOOKED_AT` with a fitted curve)."""
    return 1.0 if hit_curve is None else OLDER_WAVE_RATIO_LOOKED_AT


def older_waves_looked_at(l2_left_bytes: float, wave_bytes: float, hit_curve) -> int:
    """About how many waves back `older_wave_hits` looks from a wave that leaves `l2_left_bytes` of L2, each wave
    `wave_bytes` (loads and the lines their stores add): those that fit in the room it looks at, and the first one
    that does not (its loop counts it to find that out)."""
    room = _ratio_looked_at(hit_curve) * l2_left_bytes
    if room <= 0 or wave_bytes <= 0:
        return 1
    return min(OLDER_WAVES_LOOKED_AT, int(room // wave_bytes) + 1)


def older_wave_hits(
    counter: FootprintCounter,
    block,
    grid,
    first: int,
    wave_blocks: int,
    granule_bytes: int,
    l2_left_bytes: float,
    hit_curve=None,
) -> float:
    """Bytes the wave from block `first` loads that a wave before its previous one loaded, no nearer wave did,
    and L2 still holds (`older_wave_reuse`).

    Without `hit_curve`, those of each earlier wave as long as the waves back to it fit in the L2 the current
    wave leaves, as in a least-recently-used cache. The paper's coverage looks at the previous wave only (Ernst
    et al., JPDC 2023, eq. 8), and counts the rest of a wave's footprint as new. Where a wave is shorter than a
    row of blocks, the halo it shares with the row before was loaded two or more waves earlier.

    On an L2 in two partitions the edge is not sharp: lines that blocks on both partitions read take room in
    both. There a device's ``older_wave_hit`` curve gives the share of each wave's bytes that hit by its ratio.
    docs/model/index.md ("DRAM -> L2 loads") has what both were checked against.
    """
    reuse = older_wave_reuse(
        counter, block, grid, first, wave_blocks, granule_bytes, l2_left_bytes, _ratio_looked_at(hit_curve)
    )
    return sum(b if hit_curve is None else float(hit_curve(x)) * b for x, b in reuse)


def reread_load(l2_load: float, l1_compulsory: float, n_lups: int, v_curr: float, l2_partition_count: int) -> float:
    """Bytes a wave loads from L2 beyond what its blocks each need once: the part that can miss L2 for capacity.

    The L2 load (bytes per update) is each block's compulsory volume (`l1_compulsory`) plus what a block
    re-reads after its L1 evicted it. The first part exceeds the wave's footprint `v_curr` by halos that
    neighbouring blocks of the wave share. On one unified L2 those blocks run at once and load the shared data
    at the same point of their run, so little else reaches L2 in between and it hits, as the wave's compulsory
    volume assumes (Ernst et al., JPDC 2023, sec. III.G). A re-read follows a whole L1's worth of the block's
    other traffic, so it sees the wave's oversubscription. Weighing the halos too with it over-predicted
    narrow deep blocks, whose waves exceed L2.

    An L2 split into partitions (GA100, GH100) caches each line in the partition of the SM that asked for it,
    so a neighbour on the other partition's SMs misses where a unified L2 would hit, and its copy lives as long
    as the whole wave's traffic lets it: the halos see the oversubscription too. docs/model/index.md ("DRAM ->
    L2 loads") has the measurements behind both rules.
    """
    hits_once = max(l1_compulsory * n_lups, v_curr) if l2_partition_count == 1 else v_curr
    return max(l2_load * n_lups - hits_once, 0.0)


def wave_volumes(
    counter: FootprintCounter,
    compiled: CompiledKernel,
    block,
    grid,
    wave_blocks: int,
    device,
    l2_load: float,
    l1_compulsory: float,
    l2_store: float,
) -> tuple:
    """DRAM volumes summed over the representative waves, and their compulsory, overlapping and redundant
    parts, the updates they make, and per wave its L2 coverage, previous-wave ratio and oversubscription."""
    fetch = device.dram_fetch_bytes
    l2_capacity = device.l2_effective_capacity_bytes
    dram_load = dram_store = wave_lups = 0.0
    comp_load = overlap_sum = comp_store = redundant_load = redundant_store = 0.0
    coverages, previous_ratios, l2_oversubs = [], [], []
    firsts = representative_waves(grid, wave_blocks)

    def waves_back_to(back: int) -> list[ThreadSet]:
        """The representative waves and the `back` waves before the first of them."""
        start = firsts[0] - min(back, firsts[0] // wave_blocks) * wave_blocks
        return [ThreadSet.linear_range(block, grid, f, wave_blocks) for f in range(start, firsts[-1] + 1, wave_blocks)]

    counter.prefetch(waves_back_to(1), fetch)
    hit_curve = device.curves.get("older_wave_hit")
    for first in firsts:
        curr = ThreadSet.linear_range(block, grid, first, wave_blocks)
        n_lups = count_points(compiled.points, curr)
        v_curr = counter.union(AccessKind.LOAD, [curr], fetch) * fetch
        v_store = counter.union(AccessKind.STORE, [curr], fetch) * fetch
        curr_store_lines = counter.stores_beyond_loads(curr, fetch) * fetch
        if first >= wave_blocks:
            prev = ThreadSet.linear_range(block, grid, first - wave_blocks, wave_blocks)
            v_prev = counter.union(AccessKind.LOAD, [prev], fetch) * fetch
            prev_store_lines = counter.stores_beyond_loads(prev, fetch) * fetch
            v_overlap = counter.overlap(AccessKind.LOAD, curr, prev, fetch) * fetch
        else:
            v_prev = v_overlap = prev_store_lines = 0
        l2_left = l2_capacity - (v_curr - v_overlap) - curr_store_lines
        if first == firsts[0] and v_prev:  # the older waves L2 may hold, in one call for all representative waves
            counter.prefetch(waves_back_to(older_waves_looked_at(l2_left, v_prev + prev_store_lines, hit_curve)), fetch)
        new = v_curr - v_overlap - older_wave_hits(counter, block, grid, first, wave_blocks, fetch, l2_left, hit_curve)
        # the coverage of Ernst et al. (JPDC 2023) eq. 8 counts loads only; L2 is write-back and allocates a
        # stored line too, so both waves' stores take their share of it (V100 r=2 16x4x16 fold 1x1x2, whose
        # two waves' loads just fit the 6 MB: its previous wave's halo measured as a miss, 10.73 B/Lup, where
        # loads alone predicted 9.49)
        coverage = l2_left / (v_prev + prev_store_lines) if v_prev else float("inf")
        previous_ratio = 1.0 / coverage if coverage > 0 else float("inf")
        l2_oversub = (v_curr + v_store) / l2_capacity
        wave_redundant_load = reread_load(l2_load, l1_compulsory, n_lups, v_curr, device.l2_partition_count)
        wave_redundant_store = max(l2_store * n_lups - v_store, 0.0)
        dram_load += float(
            composition.dram_load(
                new, v_overlap, previous_ratio, l2_oversub, wave_redundant_load, device.unified_l2
            ).evaluate(device.curves)
        )
        dram_store += float(composition.dram_store(v_store, l2_oversub, wave_redundant_store).evaluate(device.curves))
        comp_load += new
        overlap_sum += v_overlap
        comp_store += v_store
        redundant_load += wave_redundant_load
        redundant_store += wave_redundant_store
        previous_ratios.append(previous_ratio)
        wave_lups += n_lups
        coverages.append(coverage)
        l2_oversubs.append(l2_oversub)
    return (
        dram_load,
        dram_store,
        wave_lups,
        comp_load,
        overlap_sum,
        comp_store,
        redundant_load,
        redundant_store,
        coverages,
        previous_ratios,
        l2_oversubs,
    )


def estimate_volumes(model: KernelModel, block, device, backend) -> Metrics:
    """Metrics of one (already folded) model for one block size, per lattice update."""
    compiled = compile_kernel(model, block)
    fields = {f.name: f for f in model.fields}
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    occ = occupancy(model, math.prod(block), device, block)
    counter = FootprintCounter(compiled, fields, backend)
    sector, line = device.l1_sector_bytes, device.l1_line_bytes

    # -- L1 and L2 <- L1, per representative block ------------------------------------
    bids = representative_blocks(grid)
    # an L1 that caches only the read-only path passes the other arrays' loads on to L2 whole
    uncached = (
        frozenset() if device.global_loads_cached_in_l1 else frozenset(fields) - model.loads_through_read_only_path()
    )
    req = block_requests(compiled, fields, block, bids, device, uncached)
    cycles = req.l1_cycles
    requested = req.requested_load_sectors * sector
    uncached_load = req.uncached_load_sectors * sector
    stores = req.store_sectors * sector
    lups = max(req.lattice_updates, 1)
    comp = alloc = 0
    for bid in bids:
        comp += counter.block(AccessKind.LOAD, block, bid, sector, skip=uncached) * sector
        alloc += counter.block(AccessKind.LOAD, block, bid, line, skip=uncached) * line
    n_rep = len(bids)
    l1_oversubscription = (alloc / n_rep) * max(occ.blocks_per_sm, 1) / device.l1_capacity_bytes
    l2_load = (
        float(
            composition.l2_load(comp, requested - uncached_load, l1_oversubscription, uncached_load).evaluate(
                device.curves
            )
        )
        / lups
    )
    l1_compulsory = (comp + uncached_load) / lups
    l2_store = stores / lups

    # -- DRAM <- L2, per representative wave -----------------------------------------
    wave_blocks = max(device.sm_count * max(occ.blocks_per_sm, 1), 1)
    total_blocks = math.prod(grid)
    wave_blocks = min(wave_blocks, total_blocks)
    waves = _WAVES.get(
        (compiled, device, backend),
        (tuple(fields.values()), tuple(block), grid, wave_blocks, l2_load, l1_compulsory, l2_store),
        lambda: wave_volumes(
            counter, compiled, tuple(block), grid, wave_blocks, device, l2_load, l1_compulsory, l2_store
        ),
    )
    dram_load, dram_store, wave_lups, comp_load, overlap_sum, comp_store, redundant_load, redundant_store = waves[:8]
    coverages, previous_ratios, l2_oversubs = waves[8:]
    wave_lups = max(wave_lups, 1)
    threads_per_block = math.prod(block)
    spills = spill_traffic(
        *model.spills_for(model.fold, block),
        lups / (n_rep * threads_per_block),
        threads_per_block * max(occ.blocks_per_sm, 1),
        device,
    )
    shared = shared_requests(model, tuple(block), bids[:1], device).compiled(
        model.compiled_shared_load_words_for(model.fold, block)
    )
    # the compute of a kernel that computes outside its domain runs in the grid's edge blocks as in the others
    launched = model.launched_points_per_lup(tuple(block))
    spill_l2_load, spill_l2_store = spills.reaching("L2")
    spill_dram_load, spill_dram_store = spills.reaching("DRAM")

    return Metrics(
        # a warp's spill access is one request of 4 B per lane: one L1 wavefront of `line` bytes
        l1_cycles_per_lup=cycles / lups + spills.bytes_per_lup / line,
        l2_load_bytes_per_lup=l2_load + spill_l2_load,
        l2_store_bytes_per_lup=l2_store + spill_l2_store,
        dram_load_bytes_per_lup=dram_load / wave_lups + spill_dram_load,
        dram_store_bytes_per_lup=dram_store / wave_lups + spill_dram_store,
        flops_per_lup=model.flops_per_lup * launched,
        blocks_per_sm=occ.blocks_per_sm,
        occupancy_limited_by=occ.limited_by,
        registers_per_thread=model.registers_for(model.fold, block) or 0,
        spill_load_bytes_per_lup=spills.load_bytes_per_lup,
        spill_store_bytes_per_lup=spills.store_bytes_per_lup,
        spill_level=spills.level if spills.bytes_per_lup else "",
        shared_load_wavefronts_per_lup=shared.load_wavefronts_per_lup * launched,
        shared_store_wavefronts_per_lup=shared.store_wavefronts_per_lup,
        shared_load_requests_per_lup=shared.load_requests_per_lup * launched,
        shared_store_requests_per_lup=shared.store_requests_per_lup,
        wave_blocks=wave_blocks,
        grid=grid,
        l1_requested_bytes_per_lup=requested / lups + spills.load_bytes_per_lup,
        l1_compulsory_bytes_per_lup=l1_compulsory,
        l1_oversubscription=l1_oversubscription,
        dram_compulsory_load_bytes_per_lup=comp_load / wave_lups,
        wave_overlap_bytes_per_lup=overlap_sum / wave_lups,
        l2_coverage=float(np.mean(coverages)),
        previous_wave_ratio=float(np.mean(previous_ratios)),
        dram_redundant_load_bytes_per_lup=redundant_load / wave_lups,
        dram_compulsory_store_bytes_per_lup=comp_store / wave_lups,
        dram_redundant_store_bytes_per_lup=redundant_store / wave_lups,
        l2_oversubscription=float(np.mean(l2_oversubs)),
    )
