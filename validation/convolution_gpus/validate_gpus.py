"""The 15x15 convolution on two GA10x GPUs (RTX A4000, RTX A6000) and an H100: limiters and throughput model.

    nice -n 10 python3 validation/convolution_gpus/validate_gpus.py [--fit] [--quick] [--out validation/convolution_gpus]

The same Kernel Tuner benchmark as validation/a100_convolution (same kernel description,
`convolution.py` there), measured on two more NVIDIA GPUs (validation/data/external/README.md).
The GA10x SM is not the A100's GA100 SM (twice the FP32 lanes, an L1 that takes a request per two
cycles), so the GA10x GPUs have a fit of their own: `--fit` fits the throughput model's three fitted
constants on the RTX A4000's tile 1x1 rows (as validate_a100.py does on the A100's) and writes them;
the A4000's tiles > 1 and every A6000 row are held out (the A6000, the A40 and the RTX 3090 borrow the
A4000's fit: `borrowed_fit` in models/data/throughput.toml). The H100's cache is our own measurement of
the same kernel on a lent H100 (validation/hopper/convolution_on_gpu.py). `--fit` fits the GH100 SM on its
tile 1x1 rows too, and its tiles > 1 are held out; the H200, GH200 and H100 PCIe borrow that fit. It was first tried
and not kept, then kept once DRAM requests were priced (validation/hopper/README.md). Each device keeps its own latencies.
`--quick` ranks the tile 1x1 rows only (a check while iterating, not the reported numbers). Writes
report.md and, per GPU and model, a full report with plots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared tables

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import (
    HEADER,
    FloatFields,
    limiters_prediction,
    quality_row,
    read_only,  # noqa: E402
    refit_tile_1x1,
    summary,
    tile,
    use_compiled_registers,
    with_predictions,
)
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.models import throughput  # noqa: E402
from pystencils_perf.validate import Validation, validate_tuned, write_report  # noqa: E402

#: the headings of the two models' tables
MODEL_LABELS = {"limiters": "limiters (the paper's model)", "throughput": "throughput model (the default)"}

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "external"
HOPPER_DATA = HERE.parent / "hopper" / "data"
DESCRIPTION = HERE.parent / "a100_convolution" / "convolution.py"
#: device name (pystencils_perf/devices/data) -> its reduced Kernel Tuner cache
GPUS = {
    "RTX-A4000": DATA / "a4000_convolution15_kernel_tuner_cache_noshmem.json.gz",
    "RTX-A6000": DATA / "a6000_convolution15_kernel_tuner_cache_noshmem.json.gz",
    "H100-SXM5-80GB": HOPPER_DATA / "h100" / "convolution15_kernel_tuner_cache.json.gz",
}
#: the GPU of each SM whose tile 1x1 rows `--fit` fits on, and where its cache comes from: the GA10x SM's RTX A4000
#: (the less noisy GA10x cache: run-to-run spread 4.0 / 16.3 %, the A6000's 7.1 / 26.2 %) and the GH100 SM's H100
FIT_DEVICES = {
    "RTX-A4000": "AutoTuningAssociation/benchmark_hub 8eeb99e, RTX-A4000",
    "H100-SXM5-80GB": "our own, timed on a lent H100 80GB HBM3 on 2026-11-26, validation/hopper/data/h100",
}


#: the row subsets of the summary table
SUBSETS = (
    ("all", lambda p: True),
    ("tile 1x1", lambda p: tile(p) == (1, 1)),
    ("tiles > 1", lambda p: tile(p) != (1, 1)),
    ("read_only 0", lambda p: read_only(p) == 0),
    ("read_only 1", lambda p: read_only(p) == 1),
    ("tile 1x1, read_only 0", lambda p: tile(p) == (1, 1) and read_only(p) == 0),
    ("tile 1x1, read_only 1", lambda p: tile(p) == (1, 1) and read_only(p) == 1),
)


def by_variant(name: str, validation: Validation) -> list[str]:
    """The same numbers per tile size (both read_only pooled) and per read_only: where the errors are."""
    tiles = sorted({tile(p) for p in validation.pairs})
    rows = []
    for tx, ty in tiles:
        for ro in (None, 0, 1):
            keep = lambda p, t=(tx, ty), r=ro: tile(p) == t and (r is None or read_only(p) == r)
            label = f"tile {tx}x{ty}" + ("" if ro is None else f", read_only {ro}")
            rows.append(quality_row(label, validation.subset(keep)))
    return [f"#### {name}: per variant", "", *HEADER, *[r for r in rows if r], ""]


def measured_best_variants(validation: Validation) -> str:
    best = max(validation.pairs, key=lambda p: p.measured.values["glups"])
    return f"measured best: {best.label} at {best.measured.values['glups']:.2f} GLup/s"


def validate_gpu(device: str, spec, quick: bool) -> dict[str, Validation]:
    """Both models' validations from one ranking with the throughput model (`limiters_prediction`)."""
    only_1x1 = (lambda params: params["tile_size_x"] == params["tile_size_y"] == 1) if quick else None
    ranked = validate_tuned(read_kernel_tuner(GPUS[device]), spec, device, model="throughput", keep_variant=only_1x1)
    return {
        "limiters": with_predictions(ranked, lambda p: limiters_prediction(p, ranked.ranking.device)),
        "throughput": ranked,
    }


def refitted(validation: Validation, cache: Path) -> Validation:
    """`validation` predicted again after fitting its device's constants on its tile 1x1 rows and writing them."""
    device = validation.ranking.device
    refit_tile_1x1(
        validation, f"{cache.name} ({FIT_DEVICES[device.name]})", "validation/convolution_gpus/validate_gpus.py"
    )
    constants = throughput.constants_for(device)
    return with_predictions(
        validation, lambda p: throughput.prediction(FloatFields, device, p.candidate.metrics, constants)
    )


def constants_line(device) -> str:
    c = throughput.constants_for(device)
    return (
        "Throughput model constants: latencies L1 / L2 / DRAM "
        f"{c.l1_hit_latency_cycles:.1f} / {c.l2_hit_latency_cycles:.1f} / {c.dram_latency_cycles:.1f} cycles, "
        f"l1_tag_lookups_per_cycle {c.l1_tag_lookups_per_cycle:g}, read_only_tag_passes_per_cycle "
        f"{c.read_only_tag_passes_per_cycle:g} (guarded {c.guarded_read_only_tag_passes_per_cycle:g}), "
        f"loads_in_flight_per_warp {c.loads_in_flight_per_warp:g}, "
        f"overlap_exponent {c.overlap_exponent:g} ({c.fitted_on})."
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fit",
        action="store_true",
        help=f"refit the constants of each SM on the tile 1x1 rows of {' and '.join(FIT_DEVICES)} and write them",
    )
    parser.add_argument("--quick", action="store_true", help="tile 1x1 rows only (a check, not the reported numbers)")
    parser.add_argument("--out", default=str(HERE), help="folder for report.md and the per-GPU reports")
    args = parser.parse_args(argv)
    use_compiled_registers()  # each measured launch's registers and spills (convolution_summary.CompiledRegisters)
    spec = load_tunable_spec(DESCRIPTION)
    out = Path(args.out)
    lines = [
        "# 15x15 convolution on RTX A4000, RTX A6000 and H100: limiters and throughput model",
        "",
        (
            "The GA10x GPUs' three fitted constants come from the RTX A4000's tile 1x1 rows only "
            "(`validate_gpus.py --fit`); its tiles > 1 and every RTX A6000 row are held out. The GH100 SM's come "
            "from the H100's tile 1x1 rows the same way, its tiles > 1 held out. Data: validation/data/external (benchmark_hub Kernel Tuner caches) "
            "and validation/hopper/data/h100 (our own, measured on a lent H100), use_shmem 0, use_padding 0, "
            f"valid runs. Kernel description: `validation/a100_convolution/convolution.py`. Reproduce: "
            f"`python3 validation/convolution_gpus/validate_gpus.py{' --quick' if args.quick else ''}`."
        ),
        "",
    ]
    details = []
    for device, path in GPUS.items():
        runs = validate_gpu(device, spec, args.quick)
        if args.fit and device in FIT_DEVICES:
            runs["throughput"] = refitted(runs["throughput"], path)
        lines += [
            f"## {device} (`{path.name}`, {len(runs['limiters'].pairs)} measured configurations)",
            "",
            constants_line(runs["throughput"].ranking.device),
            "",
            measured_best_variants(runs["limiters"]),
            "",
        ]
        details += [f"## {device}", ""]
        for model, validation in runs.items():
            lines += summary(MODEL_LABELS[model], validation, SUBSETS)
            details += by_variant(model, validation)
            folder = out / device / model
            write_report(validation, folder)
            lines.append(f"Full report with plots: [{device} {model}]({device}/{model}/report.md).\n")
    text = "\n".join(lines + ["# Per variant (tile size, read_only)", ""] + details)
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
