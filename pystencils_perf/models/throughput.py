"""The ``throughput`` model, the default on every device (`launch.DEFAULT_MODEL`): the paper's limiters plus L1 tag
lookups, instruction issue, latency, block starts, barriers and tail waves.

Every term is a time per lattice update (seconds) that one resource alone would need (`term_times`), named in
`Prediction.seconds_per_lup` so that a report shows why a candidate is slow. `overlapped_seconds` combines them: a
pipeline's stages by the slowest (`PIPELINE_STAGES`), the SM's own units by a fitted power mean, the memory system
and the block scheduler overlapping fully (`OUTSIDE_SM`), and what a barrier leaves of the latency exposed
(`barrier_exposed_share`); `predict_seconds` adds a partly filled last wave. Candidates
within the fit's MAPE on its own rows of the best are tied. What each term counts, why, and what it was checked
against is in docs/model/index.md ("The throughput model"); the constants and fits, with their provenance, are in
``models/data/throughput.toml``, and a device without its own fit borrows one (`constants_for`).
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..predict import Prediction, limiter_times

if TYPE_CHECKING:
    import numpy as np

# numpy, the estimator and the kernel model (sympy) are imported by the functions that count requests, so that
# loading this plugin imports none of them

MODEL_NAME = "throughput"
DATA_FILE = Path(__file__).parent / "data" / "throughput.toml"
#: the extras this model adds to `Metrics.extras` (per lattice update unless named otherwise)
EXTRAS = (
    "load_requests_per_lup",
    "read_only_load_requests_per_lup",
    "individually_guarded_load_requests_per_lup",
    "individually_guarded_read_only_load_requests_per_lup",
    "spill_load_requests_per_lup",
    "l1_tag_lookups_per_lup",
    "read_only_l1_tag_lookups_per_lup",
    "l1_tag_passes_per_lup",
    "read_only_l1_tag_passes_per_lup",
    "individually_guarded_read_only_l1_tag_passes_per_lup",
    "warp_instructions_per_lup",
    "point_lane_utilization",
    "warps_per_lup",
    "resident_warps_per_sm",
    "waves",
    "last_wave_blocks_per_sm",
    "l2_load_requests_per_lup",
    "l2_store_requests_per_lup",
    "partly_stored_lines_per_lup",
    "stores_per_update",
    "slowest_warp_load_rounds_ratio",
)
#: extras it adds only where a compiler's code was read (`KernelModel.load_waits_for`)
COMPILED_EXTRAS = ("compiled_load_waits_per_lup",)
#: extras it adds only where the code says how many loads a warp issues at once (`Access.loads_in_flight`)
CODED_EXTRAS = ("coded_load_requests_per_lup", "coded_load_rounds_per_lup")


@dataclass(frozen=True)
class ThroughputConstants:
    """One device's data for this model (cycles are core cycles): its latencies and issue rate from its device
    file, the model's defaults and the fitted constants."""

    l1_hit_latency_cycles: float
    l2_hit_latency_cycles: float
    dram_latency_cycles: float
    warp_instructions_per_cycle_per_sm: int
    l1_tag_lookups_per_cycle: float
    #: fitted on the convolution, whose read-only loads are ``__ldg`` of an int index: nvcc recomputes each one's
    #: 64-bit address (more instructions than a plain load, more under a guard), and the rate prices that as much
    #: as the path; a ``const __restrict__`` load has none of it (docs/model/index.md, ``L1 tags``)
    read_only_tag_passes_per_cycle: float
    #: the same for read-only loads that each sit under an ``if`` of their own (`individually_guarded`): nvcc
    #: computes each one's address under its guard, more instructions than an unguarded one
    guarded_read_only_tag_passes_per_cycle: float
    loads_in_flight_per_warp: float
    #: the same for loads that each sit under an ``if`` of their own (`individually_guarded`): where the compiler
    #: branches around each one instead of predicating it, a warp has one such load in flight at a time
    guarded_loads_in_flight_per_warp: float
    #: the same for such loads through NVIDIA's read-only path (`read_only_fields`)
    guarded_read_only_loads_in_flight_per_warp: float
    overlap_exponent: float
    #: the most `overlap_exponent` may be in a kernel that stages data in shared memory (`overlap_exponent_for`)
    shared_memory_max_overlap_exponent: float
    #: L2 bandwidth one load request occupies at least, however few sectors it carries
    l2_bytes_per_request: float
    #: the same for a store request
    l2_bytes_per_store_request: float
    #: L2 bandwidth a stored byte occupies, in loaded bytes
    l2_load_bytes_per_store_byte: float
    #: DRAM bandwidth a load request that misses L2 occupies at least (0: a request costs its bytes only)
    dram_bytes_per_request: float
    #: DRAM bytes a line that a warp store writes in part costs beyond its bytes, by the warp stores an SM has in
    #: flight (its resident warps x a point's stores): ((warp stores, bytes), ...) in rising order, interpolated
    #: linearly and held past its ends
    dram_bytes_per_partly_stored_line: tuple[tuple[float, float], ...]
    #: SM cycles between two block starts on an SM at least (0: not measured, no limit)
    cycles_per_block_start: float
    #: the fit's MAPE of throughput on its own rows (a fraction): the measured error within which a ranking
    #: calls candidates tied, as the limiters use their measured DRAM-load error
    mape_on_fitted_rows: float
    fitted_on: str = ""


@functools.cache
def _table() -> dict:
    with open(DATA_FILE, "rb") as fh:
        return tomllib.load(fh)


def _values(table: dict) -> dict:
    """The values of a TOML section; a table of rows (a list of lists) as a tuple of tuples, so that the frozen
    `ThroughputConstants` stays hashable."""
    return {k: _frozen(v["value"]) for k, v in table.items() if isinstance(v, dict) and "value" in v}


def _frozen(value):
    return tuple(_frozen(item) for item in value) if isinstance(value, list) else value


#: the device-file quantities this model reads (format version 3 of the device files)
DEVICE_QUANTITIES = (
    "l1_hit_latency_cycles",
    "l2_hit_latency_cycles",
    "dram_latency_cycles",
    "warp_instructions_per_cycle_per_sm",
)


def constants_for(device) -> ThroughputConstants:
    """The model's data for `device`: latencies and issue rate from its device file, the defaults, what its
    vendor's compilers and hardware change (``[vendors.NAME]``), what was measured on a GPU of its
    architecture (``[architectures.NAME]``), and its own fit, or the one its ``borrowed_fit`` names (a GPU of the
    same SM), or the one ``[defaults.fit]`` borrows (fitted constants are not fitted per device to one kernel). A
    borrowed fit does not override what the vendor and architecture sections state: it was fitted on other
    hardware, where that may not hold."""
    table = _table()
    entry = table.get("devices", {}).get(device.name, {})
    from_device = {name: getattr(device, name) for name in DEVICE_QUANTITIES}
    hardware = {
        **_values(table.get("vendors", {}).get(device.vendor, {})),
        **_values(table.get("architectures", {}).get(device.architecture, {})),
    }
    if "fit" in entry:
        fit, fitted_on = entry["fit"], entry["fit"]["data"]
        values = {**_values(table["defaults"]), **hardware, **_values(entry), **_values(fit), **from_device}
    else:
        lender = entry.get("borrowed_fit", {}).get("from") or table["defaults"]["fit"]["borrowed_from"]
        fit = table["devices"][lender]["fit"]
        fitted_on = f"borrowed from {lender}, not fitted on {device.name}: {fit['data']}"
        values = {**_values(table["defaults"]), **_values(fit), **hardware, **_values(entry), **from_device}
    return ThroughputConstants(**values, fitted_on=fitted_on)


# -- what a candidate asks of L1 and the schedulers ---------------------------------------------


def _warps_with_an_active_lane(active: np.ndarray, warp: int) -> int:
    """Warps (per block, rows of `warp` consecutive threads) in which some thread of `active` (..., blocks, threads)
    runs, summed over the leading axes."""
    from ..estimate.l1 import in_rows

    return int(in_rows(active, warp, False).any(axis=1).sum())  # a partly filled warp's missing lanes never run


def individually_guarded(model, block) -> bool:
    """Whether each guarded load of `model`'s code for `block` sits under an ``if`` of its own
    (`KernelModel.loads_guarded_one_by_one`, where its guards are compiled for `block`)."""
    from ..estimate.addresses import guards_compiled

    return model.loads_guarded_one_by_one and guards_compiled(model, block)


def request_counts(model, launch, device, tag_lookups_per_pass: float) -> dict[str, float]:
    """Warp load requests (those under an ``if`` of their own apart), tag lookups (distinct lines per request),
    tag-stage passes (`tag_lookups_per_pass` lines each, at least one per request), the lines warp stores
    touch, warp instructions, and the share of SIMT lanes that update a point when its arithmetic issues, per
    lattice update; and the L2 sectors a load request wants per line it touches (``load_sectors_per_line``).
    A warp issues for all its lanes: a block of 48 threads runs two warps, the second half idle, and the idle
    threads past the domain's edge still hold their lanes."""
    import numpy as np

    from ..estimate.addresses import block_threads, compile_kernel
    from ..estimate.l1 import load_lines
    from ..estimate.volumes import representative_blocks
    from ..kernel import AccessKind

    block = launch.block
    warp = device.warp_size
    compiled = compile_kernel(model, block)
    fields = {f.name: f for f in model.fields}
    read_only = set(getattr(model, "read_only_fields", ()))
    grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
    bids = tuple(map(tuple, representative_blocks(grid)))
    threads = block_threads(tuple(block), bids)
    lups, point_warps, store_requests, store_lines, stored_bytes, stores_active = _point_and_store_counts(
        compiled, tuple(fields.values()), tuple(block), bids, warp, device.l1_line_bytes
    )
    counts = dict.fromkeys(
        (
            "load_requests_per_lup",
            "read_only_load_requests_per_lup",
            "load_sectors_per_line",
            "individually_guarded_load_requests_per_lup",
            "individually_guarded_read_only_load_requests_per_lup",
            "l1_tag_lookups_per_lup",
            "read_only_l1_tag_lookups_per_lup",
            "l1_tag_passes_per_lup",
            "read_only_l1_tag_passes_per_lup",
            "individually_guarded_read_only_l1_tag_passes_per_lup",
        ),
        0.0,
    )
    counts["slowest_warp_load_rounds_ratio"] = 1.0
    if any(i.kind is AccessKind.LOAD for i in compiled.instructions):
        loads, weight, lines, sectors = load_lines(
            compiled, tuple(fields.values()), tuple(block), bids, (warp, device.l1_line_bytes, device.l2_sector_bytes)
        )
        issued = lines > 0  # per load class and warp
        requests = issued.sum(axis=1) * weight
        passes = np.ceil(lines / tag_lookups_per_pass).sum(axis=1) * weight
        lines = lines.sum(axis=1) * weight
        counts["load_sectors_per_line"] = float((sectors.sum(axis=1) * weight).sum() / max(lines.sum(), 1))
        ro = np.array([i.field in read_only for i in loads])
        counts["load_requests_per_lup"] = float(requests[~ro].sum()) / lups
        counts["read_only_load_requests_per_lup"] = float(requests[ro].sum()) / lups
        in_flight = np.array([compiled.loads_in_flight(i.guards) for i in loads])
        coded = in_flight > 0
        # a round per request where the code does not say how many go at once: the ratio asks only which warp
        # waits longest
        rounds = (issued * (weight / np.maximum(in_flight, 1))[:, None]).sum(axis=0).reshape(len(threads.coords), -1)
        if rounds.mean() > 0:
            counts["slowest_warp_load_rounds_ratio"] = float(rounds.max(axis=1).mean() / rounds.mean())
        if coded.any():  # the code says how many a warp issues at once: a round per that many requests
            counts["coded_load_requests_per_lup"] = float(requests[coded].sum()) / lups
            counts["coded_load_rounds_per_lup"] = float((requests[coded] / in_flight[coded]).sum()) / lups
        if individually_guarded(model, block):
            guarded = np.array([any(conj for conj in i.guards) for i in loads])
            rounds_estimated = guarded & ~coded  # the others' rounds are the code's
            counts["individually_guarded_load_requests_per_lup"] = float(requests[rounds_estimated].sum()) / lups
            counts["individually_guarded_read_only_load_requests_per_lup"] = (
                float(requests[rounds_estimated & ro].sum()) / lups
            )
            counts["individually_guarded_read_only_l1_tag_passes_per_lup"] = float(passes[guarded & ro].sum()) / lups
        counts["l1_tag_lookups_per_lup"] = float(lines[~ro].sum()) / lups
        counts["read_only_l1_tag_lookups_per_lup"] = float(lines[ro].sum()) / lups
        counts["l1_tag_passes_per_lup"] = float(passes[~ro].sum()) / lups
        counts["read_only_l1_tag_passes_per_lup"] = float(passes[ro].sum()) / lups
    store_requests /= lups
    counts["store_lines_per_lup"] = float(store_lines) / lups
    # lines a warp store writes in part: its lines less the lines its lanes' bytes would fill
    counts["partly_stored_lines_per_lup"] = max(float(store_lines) - stored_bytes / device.l1_line_bytes, 0.0) / lups
    counts["stores_per_update"] = float(stores_active) / lups  # a folded thread's stores, one point's each
    # the blocks at the grid's edge compute as the others do where the kernel computes outside its domain
    launched = model.launched_points_per_lup(block)
    fma_instructions = model.flops_per_lup / 2 * point_warps / lups * launched
    counts["warp_instructions_per_lup"] = (
        counts["load_requests_per_lup"] + counts["read_only_load_requests_per_lup"] + store_requests + fma_instructions
    )
    counts["point_lane_utilization"] = lups / (warp * point_warps)
    blocks, threads_per_block = threads.coords.shape[:2]
    counts["warps_per_lup"] = blocks * -(-threads_per_block // warp) / lups * launched
    return counts


def _point_and_store_counts(compiled, field_list, block, bids, warp: int, line_bytes: int) -> tuple:
    """Of `compiled` on the representative blocks `bids`: updates (at least 1), warps with a lane that updates,
    warp store requests, the lines warp stores touch (every one an L2 request: stores write through L1), the bytes
    they store and the active store lanes. Kept for the compiled code, which a SPEC's ``read_only`` variants
    share."""
    return _kept_counts().get(
        (compiled,),
        (field_list, block, bids, warp, line_bytes),
        lambda: _count_points_and_stores(compiled, field_list, block, bids, warp, line_bytes),
    )


@functools.cache
def _kept_counts():
    """`_point_and_store_counts`' values (made on first use: importing the estimator here would load numpy and
    sympy with the model's module)."""
    from ..estimate.addresses import KeptByIdentity

    return KeptByIdentity(128)


def _count_points_and_stores(compiled, field_list, block, bids, warp: int, line_bytes: int) -> tuple:
    import numpy as np

    from ..estimate.addresses import active_masks, block_threads, byte_addresses
    from ..estimate.l1 import distinct_per_row, rows_of
    from ..kernel import AccessKind

    fields = {f.name: f for f in field_list}
    threads = block_threads(block, bids)
    stores = [i for i in compiled.instructions if i.kind is AccessKind.STORE]
    updating = [threads.satisfying(conj) for conj in compiled.points]
    lups = max(threads.updates(compiled.points), 1)
    point_warps = max(_warps_with_an_active_lane(np.stack(updating), warp), 1) if updating else 1
    store_active = active_masks(stores, threads)
    store_lines = (
        int(distinct_per_row(rows_of(byte_addresses(stores, fields, threads) // line_bytes, store_active, warp)).sum())
        if stores
        else 0
    )
    stored_bytes = sum(int(a.sum()) * fields[i.field].element_bytes for a, i in zip(store_active, stores))
    return (
        lups,
        point_warps,
        _warps_with_an_active_lane(store_active, warp),
        store_lines,
        stored_bytes,
        int(store_active.sum()),
    )


def candidate_extras(model, launch, device, metrics) -> dict[str, float]:
    """Everything the terms need beyond the estimator's metrics (added to ``metrics.extras``)."""
    warps_per_block = -(-launch.threads_per_block // device.warp_size)
    blocks_per_sm = max(metrics.blocks_per_sm, 1)
    total_blocks = math.prod(metrics.grid)
    full_wave_blocks = device.sm_count * blocks_per_sm
    last_wave_blocks = total_blocks % full_wave_blocks
    counts = request_counts(model, launch, device, constants_for(device).l1_tag_lookups_per_cycle)
    # spilled registers: 4 B per lane, one warp instruction (a load a request) per 4 B of each lane
    spill_loads = metrics.spill_load_bytes_per_lup / (4 * device.warp_size)
    if (instructions := model.compiled_instructions_for(launch.fold, launch.block)) is not None:
        # the compiled code's instructions, address arithmetic and spills' included, replace the estimate
        counts["warp_instructions_per_lup"] = instructions * counts["warps_per_lup"]
    else:
        counts["warp_instructions_per_lup"] += (
            spill_loads
            + metrics.spill_store_bytes_per_lup / (4 * device.warp_size)
            + metrics.shared_load_requests_per_lup
            + metrics.shared_store_requests_per_lup
        )
    # what a load request misses in L1 reaches L2 as one request per line, with the sectors a warp wants of it
    sectors_per_request = max(counts.pop("load_sectors_per_line"), 1.0)
    counts["l2_load_requests_per_lup"] = metrics.l2_load_bytes_per_lup / (device.l2_sector_bytes * sectors_per_request)
    counts["l2_store_requests_per_lup"] = counts.pop("store_lines_per_lup")
    waits = model.load_waits_for(launch.fold, launch.block)
    compiled = {} if waits is None else {"compiled_load_waits_per_lup": waits * counts["warps_per_lup"]}
    return {
        **counts,
        **compiled,  # every warp of a block waits as often as its code says
        "spill_load_requests_per_lup": spill_loads,
        "resident_warps_per_sm": float(blocks_per_sm * warps_per_block),
        "waves": total_blocks / full_wave_blocks,
        "last_wave_blocks_per_sm": float(-(-last_wave_blocks // device.sm_count)),
    }


# -- the terms and their combination ------------------------------------------------------------


def load_rounds_per_lup(x: dict, c: ThroughputConstants) -> tuple[float, float]:
    """Warp load requests per update and the rounds they take: a warp issues a round of requests, then waits
    for all of them. As often as the compiled code waits, where it was read; else those whose code says how
    many go at once (`Access.loads_in_flight`: a loop unrolled at run time) at that, those under an ``if`` of
    their own at their own rate (those through the read-only path at theirs), the others at the estimated
    loads in flight."""
    requests = x["load_requests_per_lup"] + x["read_only_load_requests_per_lup"] + x["spill_load_requests_per_lup"]
    if "compiled_load_waits_per_lup" in x:
        return requests, x["compiled_load_waits_per_lup"]
    guarded = x["individually_guarded_load_requests_per_lup"]
    guarded_read_only = x["individually_guarded_read_only_load_requests_per_lup"]
    coded = x.get("coded_load_requests_per_lup", 0.0)
    return requests, (
        x.get("coded_load_rounds_per_lup", 0.0)
        + (requests - coded - guarded) / c.loads_in_flight_per_warp
        + (guarded - guarded_read_only) / c.guarded_loads_in_flight_per_warp
        + guarded_read_only / c.guarded_read_only_loads_in_flight_per_warp
    )


def latency_parts_cycles(metrics, c: ThroughputConstants) -> tuple[float, float]:
    """The unloaded latency of a round of loads (`load_rounds_per_lup`) in two parts: up to L2, and beyond.

    A round waits for its slowest load: it waits for L2 (DRAM) if any of its requests goes there. A request
    goes there with the share of the requested bytes that L2 (DRAM) serves, so a round of k requests with
    ``1 - (1 - share)^k``. Weighting the levels by the bytes alone made a round that fetches one line of
    seven from DRAM wait a seventh of the DRAM latency, which underpriced unfolded short stencils and D3Q19 on
    Hopper (docs/model/index.md, ``latency``)."""
    requested = max(metrics.l1_requested_bytes_per_lup, 1e-30)
    from_l2 = min(metrics.l2_load_bytes_per_lup / requested, 1.0)
    from_dram = min(metrics.dram_load_bytes_per_lup / requested, from_l2)
    requests, rounds = load_rounds_per_lup(metrics.extras, c)
    per_round = max(requests / rounds, 1.0) if rounds else 1.0
    from_l2, from_dram = (1.0 - (1.0 - share) ** per_round for share in (from_l2, from_dram))
    return (
        c.l1_hit_latency_cycles + from_l2 * (c.l2_hit_latency_cycles - c.l1_hit_latency_cycles),
        from_dram * (c.dram_latency_cycles - c.l2_hit_latency_cycles),
    )


def queueing_factor(memory_utilization: float) -> float:
    """How much longer what misses L2 waits at `memory_utilization` u of the level that serves it
    (`MEMORY_QUEUE`): 1 / (1 - u), an M/M/1 queue's response time over its service time."""
    return 1.0 / (1.0 - min(memory_utilization, MAX_MEMORY_UTILIZATION))


def mean_latency_cycles(metrics, c: ThroughputConstants, memory_utilization: float = 0.0) -> float:
    """Load-to-use latency of a round of loads (`latency_parts_cycles`), what misses L2 at `memory_utilization`
    of the level that serves it (`queueing_factor`)."""
    up_to_l2, beyond_l2 = latency_parts_cycles(metrics, c)
    return up_to_l2 + beyond_l2 * queueing_factor(memory_utilization)


def l2_bytes_per_lup(metrics, c: ThroughputConstants) -> float:
    """The L2 bandwidth an update occupies, in loaded bytes: its bytes (a stored byte at its cost), or its requests'
    slots where those are more (a request of fewer sectors than a slot moves still takes the slot)."""
    x = metrics.extras
    by_bytes = metrics.l2_load_bytes_per_lup + metrics.l2_store_bytes_per_lup * c.l2_load_bytes_per_store_byte
    by_requests = (
        x["l2_load_requests_per_lup"] * c.l2_bytes_per_request
        + x["l2_store_requests_per_lup"] * c.l2_bytes_per_store_request
    )
    return max(by_bytes, by_requests)


def dram_bytes_per_partly_stored_line(warp_stores_in_flight: float, c: ThroughputConstants) -> float:
    """`ThroughputConstants.dram_bytes_per_partly_stored_line` with `warp_stores_in_flight` per SM."""
    import numpy as np

    in_flight, costs = zip(*c.dram_bytes_per_partly_stored_line)
    return float(np.interp(warp_stores_in_flight, in_flight, costs))


def dram_seconds_per_lup(metrics, device, c: ThroughputConstants, by_bytes: float) -> float:
    """DRAM's time per update: its bytes (`by_bytes`, the limiters' term) and what requests cost beyond their bytes.

    Loads: the requests that miss L2 where those take longer than their bytes, each at least
    `dram_bytes_per_request` of DRAM's bandwidth (the requests' share of what DRAM serves of L2's load bytes).
    Stores: each line a warp store writes in part at its extra cost (`dram_bytes_per_partly_stored_line`), which
    grows with the warp stores an SM has in flight, its resident warps x a point's stores (measured on Hopper
    with copies of 1 to 27 fields: docs/model/index.md, ``DRAM``). A folded thread's stores count as one
    point's: folded blocks of the stencils and the 2D Jacobi run faster than unfolded ones, not slower."""
    x = metrics.extras
    missing_share = min(metrics.dram_load_bytes_per_lup / max(metrics.l2_load_bytes_per_lup, 1e-30), 1.0)
    load_requests_beyond_bytes = max(
        x["l2_load_requests_per_lup"] * missing_share * c.dram_bytes_per_request - metrics.dram_load_bytes_per_lup, 0.0
    )
    in_flight = x["stores_per_update"] * x["resident_warps_per_sm"]
    partly_stored = x["partly_stored_lines_per_lup"] * dram_bytes_per_partly_stored_line(in_flight, c)
    return by_bytes + (load_requests_beyond_bytes + partly_stored) / (device.dram_bandwidth_gbs * 1e9)


def l1_request_stage_cycles_per_lup(x: dict, device) -> float:
    """L1 cycles per update of the tag stage for ordinary loads: a pass per cycle, and a request at least
    ``1 / l1_requests_per_cycle`` cycles (two on GA10x, whose 2-row blocks of the convolution then cost what
    their extra requests measure: docs/model/index.md, ``L1 tags``)."""
    return max(x["l1_tag_passes_per_lup"], x["load_requests_per_lup"] / device.l1_requests_per_cycle)


def read_only_stage_cycles_per_lup(x: dict, c: ThroughputConstants) -> float:
    """L1 cycles per update of the read-only path's passes, those of loads under an ``if`` of their own at their
    own rate: with a single rate for both, the unguarded ``__ldg`` launches ran faster than predicted where the
    guarded ones were right (docs/model/index.md, ``L1 tags``)."""
    guarded = x["individually_guarded_read_only_l1_tag_passes_per_lup"]
    return (
        x["read_only_l1_tag_passes_per_lup"] - guarded
    ) / c.read_only_tag_passes_per_cycle + guarded / c.guarded_read_only_tag_passes_per_cycle


def term_times(
    model, device, metrics, c: ThroughputConstants, resident_warps_per_sm: float | None = None
) -> dict[str, float]:
    """Seconds per lattice update that each resource alone would need (before overlap and tail), with the
    candidate's occupancy or `resident_warps_per_sm` (a partly filled last wave).

    ``FP``: the limiters' FP time over the share of SIMT lanes that update a point; ``L1 banks``: the limiters'
    L1 time (with shared memory's wavefronts on NVIDIA); ``LDS``: AMD's shared memory, where a kernel uses it;
    ``L1 tags``: passes of the L1TEX tag stage (`l1_request_stage_cycles_per_lup`,
    `read_only_stage_cycles_per_lup`); ``L2``: its bytes or its requests' slots (`l2_bytes_per_lup`); ``LLC``:
    the limiters' last-level cache time, where a device has one; ``DRAM``: its bytes and what requests cost
    beyond them (`dram_seconds_per_lup`); ``issue``: warp instructions (spills' and, where the SASS was read, its
    own included) over the SM's issue rate; ``latency``: Little's law, rounds of loads x their latency over the
    resident warps (`load_rounds_per_lup`, `mean_latency_cycles`), longer where warps wait at a barrier for the
    block's slowest (`barrier_wait_ratio`); ``block starts``: blocks per update x
    `ThroughputConstants.cycles_per_block_start`, where it was measured. Why each is there, and what it was
    checked against: docs/model/index.md ("The throughput model")."""
    x = metrics.extras
    sm_cycles_per_second = device.sm_count * device.clock_ghz * 1e9
    limiters = limiter_times(model, device, metrics)
    warps = resident_warps_per_sm or x["resident_warps_per_sm"]
    # the SM's warps wait for their rounds side by side; at a barrier, those done wait for the block's slowest
    request_rounds = load_rounds_per_lup(x, c)[1] / warps * barrier_wait_ratio(metrics)
    return {
        "FP": limiters["FP"] / x["point_lane_utilization"],
        "L1 banks": limiters["L1"],
        **({"LDS": limiters["LDS"]} if "LDS" in limiters else {}),
        "L1 tags": (l1_request_stage_cycles_per_lup(x, device) + read_only_stage_cycles_per_lup(x, c))
        / device.l1_cycles_per_second,
        "L2": l2_bytes_per_lup(metrics, c) / (device.l2_bandwidth_gbs * 1e9),
        **({"LLC": limiters["LLC"]} if "LLC" in limiters else {}),
        "DRAM": dram_seconds_per_lup(metrics, device, c, limiters["DRAM"]),
        "issue": x["warp_instructions_per_lup"] / c.warp_instructions_per_cycle_per_sm / sm_cycles_per_second,
        "latency": request_rounds * mean_latency_cycles(metrics, c) / sm_cycles_per_second,
        **(
            {"block starts": blocks_per_lup(metrics) * c.cycles_per_block_start / sm_cycles_per_second}
            if c.cycles_per_block_start
            else {}
        ),
    }


def blocks_per_lup(metrics) -> float:
    """Thread blocks per lattice update."""
    x = metrics.extras
    return x["warps_per_lup"] * max(metrics.blocks_per_sm, 1) / x["resident_warps_per_sm"]


#: the level that serves what misses L2, by the term of its time: the last-level cache where a device has one
#: (AMD's Infinity Cache), else DRAM
MEMORY_QUEUE = ("LLC", "DRAM")
#: utilization at which the queueing factor stops growing (1 / (1 - u) = 1000), so that the fixed point exists
MAX_MEMORY_UTILIZATION = 0.999
#: how close `loaded_seconds` comes to its fixed point, relative to it
FIXED_POINT_TOLERANCE = 1e-9


def loaded_seconds(
    times: dict[str, float],
    latency_parts: tuple[float, float],
    overlap_exponent: float,
    exposed_latency_share: float = 0.0,
) -> tuple[float, float]:
    """Seconds per update of `times` where the latency term waits in the memory queue, and that latency term:
    the fixed point T = overlapped(latency at u = T_queue / T), to a billionth (`FIXED_POINT_TOLERANCE`). The
    unloaded time is its lower end (u can only lengthen the latency), and T - overlapped(...) grows with T: the
    root is kept bracketed while the Illinois variant of regula falsi narrows the bracket, in a few steps where
    bisection took thirty. `latency_parts` are the unloaded latency's parts up to and beyond L2
    (`latency_parts_cycles`); `exposed_latency_share` as for `overlapped_seconds`."""
    queue = next((times[name] for name in MEMORY_QUEUE if name in times), 0.0)
    up_to_l2, beyond_l2 = latency_parts
    if not queue or not beyond_l2 or not times.get("latency"):
        return overlapped_seconds(times, overlap_exponent, exposed_latency_share), times.get("latency", 0.0)
    per_cycle = times["latency"] / (up_to_l2 + beyond_l2)

    def latency_at(t):
        return per_cycle * (up_to_l2 + beyond_l2 * queueing_factor(queue / t))

    def at(t):
        return overlapped_seconds({**times, "latency": latency_at(t)}, overlap_exponent, exposed_latency_share)

    low = high = overlapped_seconds(times, overlap_exponent, exposed_latency_share)
    excess_low = excess_high = at(high) - high  # how far the overlapped time lies beyond T: above 0 below the root
    while excess_high > 0:
        low, excess_low = high, excess_high
        high *= 2.0
        excess_high = at(high) - high
    replaced = 0  # the end the last step replaced (+1 the low, -1 the high): an end kept twice has its excess halved
    while high - low > FIXED_POINT_TOLERANCE * high and excess_high < 0:
        mid = (low * excess_high - high * excess_low) / (excess_high - excess_low)
        if not low < mid < high:
            mid = 0.5 * (low + high)
        excess = at(mid) - mid
        if excess > 0:
            low, excess_low = mid, excess
            excess_high *= 0.5 if replaced == 1 else 1.0
            replaced = 1
        else:
            high, excess_high = mid, excess
            excess_low *= 0.5 if replaced == -1 else 1.0
            replaced = -1
    return high, latency_at(high)


#: terms that are stages of one pipeline: they overlap fully, and the slowest stage's time counts (the FP32 pipe
#: executes what the schedulers issue: an FMA is counted by both)
PIPELINE_STAGES = {"L1": ("L1 tags", "L1 banks"), "dispatch": ("issue", "FP")}
#: units outside the SMs: they serve all SMs' requests while the SMs go on issuing (enough warps in flight is the
#: latency term's concern), so their time overlaps fully with the SMs' own, as in the paper's limiter model; the
#: SM's own units share its warp schedulers and issue slots and overlap only in part
MEMORY_SYSTEM = ("L2", "LLC", "DRAM")
#: what starts blocks on the SMs while their warps run: its time overlaps fully with theirs, as the memory system's
BLOCK_SCHEDULER = ("block starts",)
#: the terms outside the SMs' own units: each overlaps fully with the rest
OUTSIDE_SM = MEMORY_SYSTEM + BLOCK_SCHEDULER


def overlapped_seconds(times: dict[str, float], overlap_exponent: float, exposed_latency_share: float = 0.0) -> float:
    """Seconds per update of the terms: a pipeline's stages by the slowest (`PIPELINE_STAGES`); the SM's units,
    which overlap in part, by their power mean ``(sum t_i^p)^(1/p)``; and that against the memory system's units
    (`MEMORY_SYSTEM`) and the block scheduler (`BLOCK_SCHEDULER`), which overlap fully: the largest of them; then
    `exposed_latency_share` of the latency term on top, which nothing overlaps (`barrier_exposed_share`)."""
    staged = {stage for stages in PIPELINE_STAGES.values() for stage in stages}
    units = [t for name, t in times.items() if name not in staged and name not in OUTSIDE_SM]
    units += [
        max(times[s] for s in stages if s in times)
        for stages in PIPELINE_STAGES.values()
        if any(s in times for s in stages)
    ]
    top = max(units, default=0.0)
    in_sm = top * sum((t / top) ** overlap_exponent for t in units) ** (1.0 / overlap_exponent) if top > 0 else 0.0
    overlapped = max([in_sm, *(times[name] for name in OUTSIDE_SM if name in times)])
    return overlapped + exposed_latency_share * times.get("latency", 0.0)


def stages_in_shared_memory(metrics) -> bool:
    """Whether the kernel stores to shared memory: its threads read what others stored, after a barrier."""
    return bool(metrics.shared_store_requests_per_lup)


def overlap_exponent_for(metrics, c: ThroughputConstants) -> float:
    """The power mean's exponent for this kernel: the device's fit, at most
    `ThroughputConstants.shared_memory_max_overlap_exponent` in a kernel that stages data in shared memory, where
    each FMA waits for the shared load before it in the same warp.

    The fits were made on kernels without shared memory: Hopper's overlaps the terms nearly fully, where its
    shared-memory kernels overlap them far less (docs/model, ``barrier``)."""
    if stages_in_shared_memory(metrics):
        return min(c.overlap_exponent, c.shared_memory_max_overlap_exponent)
    return c.overlap_exponent


def barrier_wait_ratio(metrics) -> float:
    """How many times longer a block's loads take than Little's law over its warps says: in a kernel that stages data
    in shared memory (`stages_in_shared_memory`), its slowest warp's load rounds over the mean warp's
    (``slowest_warp_load_rounds_ratio``), else 1.

    At the barrier after the copy the warps that copied less wait for the slowest: they hold their slots with no
    load in flight, so the block's rounds are served by fewer warps than are resident (docs/model, ``barrier``)."""
    if not stages_in_shared_memory(metrics):
        return 1.0
    return metrics.extras.get("slowest_warp_load_rounds_ratio", 1.0)


def barrier_exposed_share(metrics, resident_blocks_per_sm: float) -> float:
    """The share of the latency term that a barrier leaves exposed: 1 / the blocks resident per SM in a kernel that
    stages data in shared memory (`stages_in_shared_memory`), else 0.

    Little's law overlaps every warp's waits with the other warps' work; at a barrier a block's warps all wait for
    its copy's loads before any of them computes, and only the other resident blocks work meanwhile (docs/model,
    ``barrier``)."""
    if not stages_in_shared_memory(metrics):
        return 0.0
    return 1.0 / max(resident_blocks_per_sm, 1.0)


def predict_seconds(model, device, metrics, c: ThroughputConstants) -> tuple[float, dict[str, float]]:
    """Seconds per update with the last wave's tail, and the named terms (each resource's time, plus what
    overlap and tail add).

    Per SM, the full waves run ``blocks_per_sm`` blocks at a time and the last wave
    ``last_wave_blocks_per_sm``; the time is the busiest SM's, against the mean blocks per SM
    (``waves x blocks_per_sm``) at full occupancy.
    """
    x = metrics.extras
    parts = latency_parts_cycles(metrics, c)
    times = term_times(model, device, metrics, c)
    blocks_per_sm = max(metrics.blocks_per_sm, 1)
    exposed = barrier_exposed_share(metrics, blocks_per_sm)
    exponent = overlap_exponent_for(metrics, c)
    full, times["latency"] = loaded_seconds(times, parts, exponent, exposed)
    if exposed:
        times["barrier"] = exposed * times["latency"]
    last = x["last_wave_blocks_per_sm"]
    # the busiest SM's work in blocks at full occupancy: the full waves, then the last wave's blocks at theirs
    # (each in its own memory queue: fewer warps wait longer, and keep DRAM less busy)
    busiest_sm_blocks = math.floor(x["waves"] + 1e-9) * blocks_per_sm
    if last:
        last_wave = term_times(model, device, metrics, c, x["resident_warps_per_sm"] * last / blocks_per_sm)
        last_exposed = barrier_exposed_share(metrics, last)
        busiest_sm_blocks += last * loaded_seconds(last_wave, parts, exponent, last_exposed)[0] / full
    total = full * busiest_sm_blocks / (x["waves"] * blocks_per_sm)
    return total, {**times, "overlap": full - max(times.values()), "tail": total - full}


def prediction(model, device, metrics, c: ThroughputConstants) -> Prediction:
    """The prediction under constants `c`: throughput, the largest term as the limiter, every term named."""
    total, named = predict_seconds(model, device, metrics, c)
    limiter = max((k for k in named if k not in ("overlap", "tail")), key=named.get)
    return Prediction(1.0 / total, limiter, named, c.mape_on_fitted_rows)


@hookimpl
def perf_models():
    return {
        MODEL_NAME: "limiters plus L1 tag lookups, instruction issue, latency (Little's law), block starts, "
        "barriers, overlap and tail waves"
    }


@hookimpl
def perf_estimate_extras(model, launch, device, options, metrics):
    if options.model != MODEL_NAME:
        return None
    return candidate_extras(model, launch, device, metrics)


@hookimpl
def perf_predict(model, launch, device, metrics, options):
    if options.model != MODEL_NAME:
        return None
    return prediction(model, device, metrics, constants_for(device))
