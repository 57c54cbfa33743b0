"""The default model on the repository's shared-memory convolution data (issue 56): wavefronts and time.

    python3 validation/shared_memory/validate_shared_memory.py [--plot FILE.png]

1. Shared-load and shared-store wavefronts of KTT's convolution, and its global load requests (the throughput
   model's count), as the estimator counts them
   (`pystencils_perf.estimate.shared` through `rtx2080ti_convolution/convolution_shmem.py`, the shared loads as
   each launch's code compiles them: `data/external/ktt_convolution15_shared_loads_sm_75.csv`), against Nsight
   Compute's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``, ``_op_st.sum`` and
   ``l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`` on the RTX 2080 Ti,
   PADDING 0, the rows without spilled registers (KTT's PADDING 1 is not Kernel Tuner's padding: see
   `rtx2080ti_convolution/shared_wavefronts.md`).
2. The default model's time per launch against the measured time, ranked as `pystencils-perf tune --replay`
   ranks (`spec_candidates`), with each launch's compiled registers where a table or the data has them: the H200's
   320-configuration sample of Kernel Tuner's shared-memory convolution (`hopper/data/h200`, registers of
   `data/external/convolution15_shmem_registers_sm_90.csv`) and the other 2122 configurations of its space, timed
   on a later lease and predicted before it (`hopper/data/h200/shmem_rest`), the A100 cache's ``use_shmem = 1`` rows (registers of
   `data/external/convolution15_shmem_registers_sm_80.csv`), and KTT's RTX 2080 Ti rows (registers from its
   counters). Spearman of predicted against measured time, the measured share of the best of the model's pick
   (ties at their worst), the best pick of any model that prices ``read_only`` 0 and 1 alike
   (`best_pick_with_switch_alike`), the measured best's predicted rank, MAPE, and the data's own run-to-run noise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import ktt_padding_0_rows, ktt_shared_loads, use_compiled_registers  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.estimate.shared import shared_requests  # noqa: E402
from pystencils_perf.estimate.volumes import representative_blocks  # noqa: E402
from pystencils_perf.launch import LaunchConfig  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_cache_json, load_tunable_spec, run_to_run_spreads  # noqa: E402
from pystencils_perf.models.throughput import constants_for, request_counts  # noqa: E402
from pystencils_perf.tune.replay import spec_candidates  # noqa: E402
from pystencils_perf.validate import rerun_spreads, time_scores  # noqa: E402

VALIDATION = Path(__file__).resolve().parents[1]
KTT_SPEC = VALIDATION / "rtx2080ti_convolution/convolution_shmem.py"
KT_SPEC = VALIDATION / "a100_convolution/convolution_shmem.py"
A100_CACHE = VALIDATION / "data/external/a100_convolution15_kernel_tuner_cache.json.gz"
H200_CACHE = VALIDATION / "hopper/data/h200/convolution15_shmem_kernel_tuner_cache.json.gz"
#: the rest of the space, timed on a later lease, blind to the model the first sample's counters shaped
H200_REST_CACHE = VALIDATION / "hopper/data/h200/shmem_rest/convolution15_shmem_rest_kernel_tuner_cache.json.gz"
KT_KEY = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only", "use_padding")
KT_FIXED = {"use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
KTT_KEY = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "READ_ONLY", "PADDING")
#: where both keys hold the switch between plain and read-only (``__ldg``) loads
READ_ONLY_INDEX = 4
LOADS, STORES = (f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("ld", "st"))
#: the copy's global loads (all of the kernel's): warp requests, which the throughput model's L1 and latency terms count
GLOBAL_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SPILLS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
WITHIN = 0.10


def wavefront_agreement(rows: list[dict]) -> list[str]:
    """Per kind (shared loads, shared stores, global load requests): rows within `WITHIN` of the counter, median
    and largest error."""
    spec, device = load_tunable_spec(KTT_SPEC), get_device("RTX-2080-Ti")
    tag_lookups = constants_for(device).l1_tag_lookups_per_cycle
    compiled_loads = ktt_shared_loads()
    errors = {LOADS: [], STORES: [], GLOBAL_REQUESTS: []}
    for r in rows:
        if any(float(r[c]) for c in SPILLS):
            continue
        bx, by, tx, ty, ro = (int(r[k]) for k in KTT_KEY[:5])
        model = spec.kernel({"TILE_SIZE_X": tx, "TILE_SIZE_Y": ty, "READ_ONLY": ro, "PADDING": 0}).model()
        block = (bx, by, 1)
        grid = tuple(-(-n // b) for n, b in zip(model.work_items, block))
        got = shared_requests(model, block, representative_blocks(grid)[:1], device).compiled(
            compiled_loads.get((bx, by, tx, ty, ro))
        )
        updates = spec.lattice_updates
        # the compute's loads run in the grid's edge blocks as in the others (`Metrics`)
        launched = model.launched_points_per_lup(block)
        errors[LOADS].append(got.load_wavefronts_per_lup * launched * updates / float(r[LOADS]) - 1)
        errors[STORES].append(got.store_wavefronts_per_lup * updates / float(r[STORES]) - 1)
        counts = request_counts(model, LaunchConfig(block, (1, 1, 1)), device, tag_lookups)
        requests = counts["load_requests_per_lup"] + counts["read_only_load_requests_per_lup"]
        errors[GLOBAL_REQUESTS].append(requests * updates / float(r[GLOBAL_REQUESTS]) - 1)
    lines = [
        f"{len(errors[LOADS])} KTT RTX 2080 Ti rows, PADDING 0, without spills; estimated shared wavefronts and "
        "global load requests against the counters:",
        "| | within 10 % | median error | largest error |",
        "|---|---|---|---|",
    ]
    for name, counter in (("loads", LOADS), ("stores", STORES), ("global load requests", GLOBAL_REQUESTS)):
        e = np.abs(np.array(errors[counter]))
        lines.append(
            f"| {name} | {np.sum(e <= WITHIN)} ({100 * np.mean(e <= WITHIN):.1f} %) | {100 * np.median(e):.2f} % "
            f"| {100 * e.max():.1f} % |"
        )
    return lines


def kernel_tuner_times(path: Path, fixed: dict) -> tuple[dict, list[float]]:
    """Measured time (ms) by KT_KEY of a Kernel Tuner cache's rows with `fixed`, and their run-to-run spreads
    (`run_to_run_spreads`: slowest over fastest run, minus 1)."""
    cache = load_cache_json(path)
    rows = {
        name: e
        for name, e in cache["cache"].items()
        if all(e.get(k) == v for k, v in fixed.items()) and isinstance(e["time"], (int, float))
    }
    times = {tuple(int(e[k]) for k in KT_KEY): float(e["time"]) for e in rows.values()}
    return times, run_to_run_spreads({"cache": rows})


def timed_twice(path: Path) -> tuple[dict, str]:
    """Measured time (ms) by KT_KEY of one of our Kernel Tuner caches of the shared-memory rows, and the run-to-run
    noise against its rerun beside it (``*_rerun.json.gz``)."""
    first, _ = kernel_tuner_times(path, {"use_shmem": 1})
    rerun, _ = kernel_tuner_times(path.with_name(path.name.replace(".json", "_rerun.json")), {"use_shmem": 1})
    noise = rerun_spreads(first, rerun)
    return first, f"rerun median {100 * np.median(noise):.1f} %, p90 {100 * np.percentile(noise, 90):.1f} %"


def best_pick_with_switch_alike(measured: dict, index: int) -> float:
    """The measured best over the best pick of any model that predicts the two values of the switch at `index` of
    the keys alike (its ties at their worst): each pair's slower launch, at their fastest. `read_only` is such a
    switch for the default model, whose only term it changes is the copy's L1 tag stage."""
    pairs: dict[tuple, list[float]] = {}
    for key, milliseconds in measured.items():
        pairs.setdefault(key[:index] + key[index + 1 :], []).append(milliseconds)
    return min(measured.values()) / min(max(times) for times in pairs.values())


def scores(
    label: str,
    spec_path: Path,
    keys: tuple,
    measured: dict,
    device: str,
    fixed: dict,
    noise: str,
    plotted: list,
    recorded: dict | None = None,
) -> str:
    """One table row: the default model's ranking of `measured`'s configurations against the measured times; the
    pairs and their tiles go to `plotted`. `recorded`: the resources the data recorded, as `spec_candidates`
    takes them."""
    spec = load_tunable_spec(spec_path)
    params = [{**dict(zip(keys, c)), **fixed} for c in measured]
    space = spec_candidates(params, spec, device, source=label, recorded=recorded)
    predicted = {tuple(c.params[k] for k in keys): c.predicted_seconds * 1e3 for c in space.candidates}
    both = sorted(set(predicted) & set(measured))
    p = np.array([predicted[c] for c in both])
    m = np.array([measured[c] for c in both])
    s = time_scores(p, m)
    plotted.append((label, p, m, [c[2] * c[3] for c in both]))
    alike = best_pick_with_switch_alike({c: measured[c] for c in both}, READ_ONLY_INDEX)
    return (
        f"| {label} | {len(both)} ({len(space.rejected)} rejected) | {s.spearman:.3f} | {100 * s.pick_share_of_best:.1f} % "
        f"| {100 * alike:.1f} % | {s.best_predicted_rank} | {s.mape_percent:.1f} | {noise} |"
    )


def plot(plotted: list, path: Path) -> None:
    """Predicted against measured time per data set, coloured by the outputs of a thread's tile."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(plotted), figsize=(4.2 * len(plotted), 3.8), squeeze=False)
    for ax, (label, p, m, tile) in zip(axes[0], plotted):
        points = ax.scatter(m, p, c=tile, s=4, cmap="viridis", norm=matplotlib.colors.LogNorm(1, 64))
        low, high = min(m.min(), p.min()) * 0.9, max(m.max(), p.max()) * 1.1
        ax.plot([low, high], [low, high], color="grey", linewidth=0.8)
        ax.set(xscale="log", yscale="log", xlim=(low, high), ylim=(low, high), title=label)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
            axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("measured ms")
    axes[0][0].set_ylabel("predicted ms")
    fig.colorbar(points, ax=axes[0][-1], label="outputs per thread (tile)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, help="write predicted against measured time by tile to this PNG")
    args = parser.parse_args(argv)
    plotted: list = []
    rows = ktt_padding_0_rows()
    print("\n".join(wavefront_agreement(rows)))
    print()
    use_compiled_registers()  # with KTT's launches' registers (convolution_summary.KttRegisters)
    h200, h200_noise = timed_twice(H200_CACHE)
    h200_rest, h200_rest_noise = timed_twice(H200_REST_CACHE)
    a100, a100_spread = kernel_tuner_times(A100_CACHE, KT_FIXED)
    ktt = {tuple(int(r[k]) for k in KTT_KEY): float(r["duration_us"]) / 1e3 for r in rows}
    print(
        "| data | launches (rejected) | Spearman | pick's share of the best | the best pick with `read_only` alike "
        "| best's predicted rank | MAPE % | noise |",
        "|---|---|---|---|---|---|---|---|",
        scores("H200, Kernel Tuner's sample", KT_SPEC, KT_KEY, h200, "H200", KT_FIXED, h200_noise, plotted),
        scores("H200, the rest (blind)", KT_SPEC, KT_KEY, h200_rest, "H200", KT_FIXED, h200_rest_noise, plotted),
        scores(
            "A100, Kernel Tuner's cache",
            KT_SPEC,
            KT_KEY,
            a100,
            "A100",
            KT_FIXED,
            f"slowest / fastest of a row's runs - 1: median {100 * np.median(a100_spread):.1f} %",
            plotted,
        ),
        scores("RTX 2080 Ti, KTT", KTT_SPEC, KTT_KEY, ktt, "RTX-2080-Ti", {}, "one run per row: not known", plotted),
        sep="\n",
    )
    if args.plot:
        plot(plotted, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
