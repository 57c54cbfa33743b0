"""The H200's counters of Kernel Tuner's shared-memory convolution against the default model's estimate (issue 56).

    python3 validation/shared_memory/h200_counters.py

Reads `hopper/data/h200/convolution15_shmem_ncu_counters_raw.csv` (ncu of the timed launch of each of the 269
launches of the H200's sample that run, `hopper/shmem_profile_on_gpu.sh`; rows in the order of that run's log,
`shmem_profile_log.txt`, which names each launch's configuration) and ranks each launch as `validate_shared_memory.py`
does (registers of `data/external/convolution15_shmem_registers_sm_90.csv`). Prints:

1. the shared-load and shared-store wavefronts the estimator counts against the counters, as for KTT's RTX 2080 Ti,
   and the stores' counter taken apart (executed STS, bank conflicts);
2. the time ncu measured against the cache's (the same launches, another day);
3. where the warps' cycles go (stall reasons per issued instruction), by block height, beside the model's
   barrier term's share of its predicted time, how the model's error follows each stall reason, and how the warps'
   cycles at a barrier follow the copy's slowest warp (`throughput.barrier_wait_ratio`).
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import use_compiled_registers  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, split_parameters  # noqa: E402
from pystencils_perf.rank import rank  # noqa: E402
from pystencils_perf.validate import spearman  # noqa: E402
from validate_shared_memory import H200_CACHE, KT_FIXED, KT_KEY, KT_SPEC, LOADS, STORES, kernel_tuner_times  # noqa: E402

H200_DATA = Path(__file__).resolve().parents[1] / "hopper/data/h200"
COUNTERS = H200_DATA / "convolution15_shmem_ncu_counters_raw.csv"
LOG = H200_DATA / "shmem_profile_log.txt"
STALLS = (
    "barrier",
    "long_scoreboard",
    "short_scoreboard",
    "mio_throttle",
    "wait",
    "not_selected",
    "selected",
    "math_pipe_throttle",
    "no_instruction",
    "dispatch_stall",
    "branch_resolving",
    "lg_throttle",
)


def stall(row: dict, reason: str) -> float:
    return number(row[f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"])


def number(text: str) -> float:
    return float(text.replace(",", ""))


def profiled_rows() -> list[tuple[tuple[int, ...], dict]]:
    """Each profiled launch's configuration (KT_KEY) and its counters: the log's launches that were not skipped, part
    by part, in the order ncu wrote their rows; each row's block and grid checked against its configuration."""
    parts = LOG.read_text().split("=== shmem_counters_")[1:]
    configs = []
    for part in parts[::2]:  # each part's start line; its end line starts the next piece
        for line in part.splitlines():
            if line.startswith("(") and "skipped" not in line:
                configs.append(tuple(int(n) for n in line[1 : line.index(")")].split(",")))
    # read in file order, not by `measure.ncu.parse_raw_csv`, which sorts by ID: each part's IDs start at 0
    with open(COUNTERS, newline="") as fh:
        rows = list(csv.DictReader(fh))[1:]  # the second line holds the units
    if len(rows) != len(configs):
        raise SystemExit(f"{COUNTERS.name}: {len(rows)} rows, the log names {len(configs)} profiled launches")
    for (bx, by, tx, ty, *_), row in zip(configs, rows):
        grid = f"({-(-4096 // (bx * tx))}, {-(-4096 // (by * ty))}, 1)"
        if row["Block Size"] != f"({bx}, {by}, 1)" or row["Grid Size"] != grid:
            raise SystemExit(
                f"{COUNTERS.name}: row {row['ID']} is {row['Block Size']} {row['Grid Size']}, not {bx}x{by}"
            )
    return list(zip(configs, rows))


def predictions(configs: list[tuple[int, ...]]) -> dict[tuple[int, ...], object]:
    """The default model's ranked candidate of each configuration on the H200 (its terms and metrics)."""
    spec = load_tunable_spec(KT_SPEC)
    by_variant = defaultdict(dict)
    for config in configs:
        others, launch = split_parameters("the H200's sample", {**dict(zip(KT_KEY, config)), **KT_FIXED}, spec)
        by_variant[tuple(sorted(others.items()))][launch.block] = config
    found = {}
    for others, blocks in by_variant.items():
        ranking = rank(spec.kernel(dict(others)), "H200", blocks=list(blocks), folds=[(1, 1, 1)], jobs=1)
        found.update({blocks[c.launch.block]: c for c in ranking.candidates})
    return found


def main() -> int:
    use_compiled_registers()
    profiled = profiled_rows()
    spec = load_tunable_spec(KT_SPEC)
    updates = spec.lattice_updates
    ranked = predictions([c for c, _ in profiled])
    metrics = [ranked[c].metrics for c, _ in profiled]
    estimated = {
        LOADS: np.array([m.shared_load_wavefronts_per_lup * updates for m in metrics]),
        STORES: np.array([m.shared_store_wavefronts_per_lup * updates for m in metrics]),
    }
    counted = {k: np.array([number(row[k]) for _, row in profiled]) for k in estimated}
    print(f"{len(profiled)} H200 launches; estimated shared wavefronts against the counters:")
    print("| | within 10 % | median error | largest error | estimate below the counter |")
    print("|---|---|---|---|---|")
    for name, counter in (("loads", LOADS), ("stores", STORES)):
        e = estimated[counter] / counted[counter] - 1
        print(
            f"| {name} | {np.sum(np.abs(e) <= 0.1)} ({100 * np.mean(np.abs(e) <= 0.1):.1f} %) "
            f"| {100 * np.median(np.abs(e)):.2f} % | {100 * np.abs(e).max():.1f} % | {np.sum(e < -1e-9)} |"
        )

    # the store counter is the executed STS plus their bank conflicts: which of the two exceeds the estimate
    executed = np.array([number(row["smsp__sass_inst_executed_op_shared_st.sum"]) for _, row in profiled])
    conflicts = np.array(
        [number(row["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]) for _, row in profiled]
    )
    requests = np.array([m.shared_store_requests_per_lup * updates for m in metrics])
    print(
        f"stores: the counter is the executed STS plus their bank conflicts on {np.mean(counted[STORES] == executed + conflicts):.0%} "
        f"of the launches; executed STS over the estimated requests: median {np.median(executed / requests):.3f}, "
        f"largest {np.max(executed / requests):.3f}; bank conflicts per executed STS: median "
        f"{np.median(conflicts / executed):.3f}, 90th percentile {np.percentile(conflicts / executed, 90):.3f}, where "
        f"the estimate has none on {np.mean(estimated[STORES] <= requests):.0%} of the launches"
    )

    cache, _ = kernel_tuner_times(H200_CACHE, {"use_shmem": 1})
    ncu_ms = np.array([number(row["gpu__time_duration.sum"]) / 1e6 for _, row in profiled])
    cache_ms = np.array([cache[c] for c, _ in profiled])
    ratio = ncu_ms / cache_ms
    print(
        f"\nncu's time over the cache's: median {np.median(ratio):.3f} (10th-90th percentile "
        f"{np.percentile(ratio, 10):.3f}-{np.percentile(ratio, 90):.3f}), Spearman {spearman(ncu_ms, cache_ms):.3f}"
    )

    predicted_ms = np.array([updates / ranked[c].prediction.lups_per_second * 1e3 for c, _ in profiled])
    log_error = np.log(cache_ms / predicted_ms)
    total = np.array([sum(stall(row, s) for s in STALLS) for _, row in profiled])
    shares = {s: np.array([stall(row, s) for _, row in profiled]) / total for s in STALLS}
    named = [ranked[c].prediction.seconds_per_lup for c, _ in profiled]
    model_barrier = np.array([n.get("barrier", 0.0) for n in named]) / (predicted_ms / 1e3 / updates)
    heights = np.array([c[1] for c, _ in profiled])
    print(
        "\nWhere the warps' cycles go (share of the stall reasons' sum per issued instruction, mean over the launches),"
        " and the model's barrier term's share of its time:"
    )
    print(
        "| block height | launches | "
        + " | ".join(STALLS[:7])
        + " | model's barrier share | measured / predicted time |"
    )
    print("|---|---|" + "---|" * 9)
    for h in sorted(set(heights)):
        sel = heights == h
        print(
            f"| {h} | {sel.sum()} | "
            + " | ".join(f"{100 * shares[s][sel].mean():.1f} %" for s in STALLS[:7])
            + f" | {100 * model_barrier[sel].mean():.1f} % | {np.exp(np.median(log_error[sel])):.2f} |"
        )
    print("\nSpearman of the model's error (log measured over predicted time) with each stall reason's share:")
    print(", ".join(f"{s} {spearman(shares[s], log_error):+.2f}" for s in STALLS[:8]))
    print(f"Spearman of the measured barrier share with the model's: {spearman(shares['barrier'], model_barrier):+.2f}")
    # warp cycles at a barrier per update: stalled warps per issued instruction x warp instructions per update
    barrier_cycles = np.array(
        [stall(row, "barrier") * number(row["smsp__inst_executed.sum"]) / updates for _, row in profiled]
    )
    slowest = np.array([m.extras["slowest_warp_load_rounds_ratio"] for m in metrics])
    print(
        "Spearman of the warp cycles at a barrier per update with the copy's slowest warp's load rounds over the mean "
        f"warp's: {spearman(barrier_cycles, slowest):+.2f}; with the model's barrier term: "
        f"{spearman(barrier_cycles, model_barrier * predicted_ms):+.2f}"
    )
    for h in sorted(set(heights)):
        sel = heights == h
        print(
            f"  blocks {h} high: {np.median(barrier_cycles[sel]):.1f} warp cycles at a barrier per update (median), "
            f"the slowest warp's rounds {np.mean(slowest[sel]):.2f} times the mean's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
