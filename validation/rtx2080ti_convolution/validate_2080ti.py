"""KTT's shared-memory 15x15 convolution on an RTX 2080 Ti: predicted global-memory volumes against Nsight Compute.

    nice -n 10 python3 validation/rtx2080ti_convolution/validate_2080ti.py [--out validation/rtx2080ti_convolution]

Data: `rtx2080ti_convolution15_ktt_counters.csv` of validation/data/external (from
AutoTuningAssociation/benchmark_hub 8eeb99e, MIT; README there), PADDING 0 (the description does not
count PADDING's shared-memory columns), every tile size and READ_ONLY; runs that spill registers keep
no volumes (their local-memory traffic is in the L2 and DRAM counters). The description,
`convolution_shmem.py`, describes the shared tile too, but this script compares the global volumes only (the
time and the shared wavefronts: `../shared_memory/report.md`): DRAM load/store (``dram__sectors_read/write.sum``) and L2
load/store (``lts__t_sectors_op_read/write.sum``), per lattice update. Nothing is fitted on this GPU;
the RTX 2080 Ti device file's capacity-miss curves are the V100's. Writes report.md and plots.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import external_data, variant_params  # noqa: E402
from pystencils_perf.measure.dataset import METRIC_BY_NAME  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.validate import Validation, metric_errors, validate_tuned, write_report  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = external_data("rtx2080ti_convolution15_ktt_counters.csv")
DEVICE = "RTX-2080-Ti"
VOLUMES = tuple(METRIC_BY_NAME[m] for m in ("dram_load", "dram_store", "l2_load", "l2_store"))


def volumes_only(validation: Validation) -> Validation:
    """The pairs without the measured time, which `../shared_memory/validate_shared_memory.py` compares."""
    pairs = [
        replace(p, measured=replace(p.measured, values={k: v for k, v in p.measured.values.items() if k != "glups"}))
        for p in validation.pairs
    ]
    return Validation(validation.dataset, validation.ranking, pairs, metric_errors(pairs, VOLUMES), None)


def points_per_thread(pair) -> int:
    params = variant_params(pair)
    return int(params["TILE_SIZE_X"]) * int(params["TILE_SIZE_Y"])


def by_tile_points(validation: Validation) -> list[str]:
    """MAPE and mean error of each volume per outputs per thread (1 .. 64): where the errors grow."""
    header = "| outputs per thread | rows | " + " | ".join(f"{m.label} MAPE % (mean %)" for m in VOLUMES) + " |"
    lines = [header, "|" + "---|" * (2 + len(VOLUMES))]
    for points in sorted({points_per_thread(p) for p in validation.pairs}):
        pairs = [p for p in validation.pairs if points_per_thread(p) == points]
        errors = {e.metric.name: e for e in metric_errors(pairs, VOLUMES)}
        cells = [
            f"{errors[m.name].mape_percent:.1f} ({errors[m.name].mean_error_percent:+.1f})" if m.name in errors else "-"
            for m in VOLUMES
        ]
        lines.append(f"| {points} | {len(pairs)} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE), help="folder for report.md and plots")
    args = parser.parse_args(argv)
    data = read_kernel_tuner(DATA)
    spec = load_tunable_spec(HERE / "convolution_shmem.py")
    validation = volumes_only(validate_tuned(data, spec, DEVICE))
    spilling = sum(r.spills for r in data.runs if r.params.get("PADDING") == 0)
    out = Path(args.out)
    report = write_report(validation, out / "volumes")
    lines = [
        "# Shared-memory 15x15 convolution (KTT) on an RTX 2080 Ti: global-memory volumes",
        "",
        (
            f"Data: `{DATA.name}` (KTT's Nsight Compute counters, RTX 2080 Ti), PADDING 0: "
            f"{len(validation.pairs)} configurations, {spilling} of them spill registers and keep no volumes. "
            "Kernel description: `convolution_shmem.py`. Nothing is fitted on this GPU. Reproduce: "
            "`python3 validation/rtx2080ti_convolution/validate_2080ti.py`."
        ),
        "",
        "| metric | rows | MAPE % | mean error % | max error % | worst |",
        "|---|---|---|---|---|---|",
    ]
    for e in validation.errors:
        lines.append(
            f"| {e.metric.label} | {e.points} | {e.mape_percent:.2f} | {e.mean_error_percent:+.2f} | "
            f"{e.max_error_percent:.1f} | {e.worst_label or e.worst.label} |"
        )
    lines += [
        "",
        "## Per outputs per thread (TILE_SIZE_X x TILE_SIZE_Y)",
        "",
        *by_tile_points(validation),
        "",
        f"Full report with plots: [volumes](volumes/{report.path.name}).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    (out / "report.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
