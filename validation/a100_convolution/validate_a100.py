"""The A100 15x15 convolution (Kernel Tuner cache, no shared memory): limiters and throughput model against measured time.

    python3 validation/a100_convolution/validate_a100.py [--fit] [--out validation/a100_convolution]

Ranks every measured block of every variant (tile_size_x/y in 1..4, read_only 0/1) once with the
throughput model (which keeps the four limiter times among its terms, so the limiters' prediction
is the same candidates' 1 / max(FP, L1 banks, L2, DRAM)). `--fit` fits the three device constants
that the tile 1x1 rows (both read_only) determine, the read-only path's tag passes per cycle (of loads
without and with an ``if`` of their own) and the overlap of the terms, and writes them with their provenance into
pystencils_perf/models/data/throughput.toml; tiles > 1 are held out. The lines the tag stage resolves
per cycle (4, documented) and the loads in flight per warp (an estimate) are not fitted: the latter,
fitted freely, drifted to a value without physical meaning (0.37 loads per warp). Writes report.md and plots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared tables

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import (
    FITTED,
    FloatFields,
    is_fit_row,
    limiters_prediction,
    read_only,
    refit_tile_1x1,
    external_data,
    summary,
    use_compiled_registers,
    with_predictions,
)
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner
from pystencils_perf.models import throughput
from pystencils_perf.validate import validate_tuned, write_report

HERE = Path(__file__).resolve().parent
DATA = external_data("a100_convolution15_kernel_tuner_cache.json.gz")
DEVICE = "A100-PCIe-40GB"

#: the heading of report.md's hand-written findings, which a rerun keeps
FINDINGS = "## What this shows"

#: the row subsets of the summary tables: the fitted rows and the held-out ones apart
SUBSETS = (
    ("all", lambda p: True),
    ("tile 1x1 (fitted)", is_fit_row),
    ("tiles > 1 (held out)", lambda p: not is_fit_row(p)),
    ("read_only 0", lambda p: read_only(p) == 0),
    ("read_only 1", lambda p: read_only(p) == 1),
    ("tile 1x1, read_only 0", lambda p: is_fit_row(p) and read_only(p) == 0),
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the A100 constants on tile 1x1 and write them")
    parser.add_argument("--out", default=str(HERE), help="folder for report.md and plots")
    parser.add_argument(
        "--tile-1x1-only", action="store_true", help="only the fitting rows (a quick check, no held-out numbers)"
    )
    args = parser.parse_args(argv)
    use_compiled_registers()  # each measured launch's registers and spills (convolution_summary.CompiledRegisters)
    spec = load_tunable_spec(HERE / "convolution.py")
    only_fit = (lambda params: params["tile_size_x"] == params["tile_size_y"] == 1) if args.tile_1x1_only else None
    ranked = validate_tuned(read_kernel_tuner(DATA), spec, DEVICE, model="throughput", keep_variant=only_fit)
    device = ranked.ranking.device
    if args.fit:
        refit_tile_1x1(
            ranked,
            f"{DATA.name} (AutoTuningAssociation/benchmark_hub 8eeb99e, A100-PCIE-40GB)",
            "validation/a100_convolution/validate_a100.py",
        )
    constants = throughput.constants_for(device)
    limiters = with_predictions(ranked, lambda p: limiters_prediction(p, device))
    model = with_predictions(
        ranked, lambda p: throughput.prediction(FloatFields, device, p.candidate.metrics, constants)
    )
    lines = [
        "# A100 15x15 convolution: limiters and throughput model against measured run times",
        "",
        (
            f"Data: `{DATA.name}` (Kernel Tuner cache, {device.name}), use_shmem 0, every tile size and read_only: "
            f"{len(ranked.pairs)} measured configurations. Kernel description: `convolution.py`. "
            "Reproduce: `python3 validation/a100_convolution/validate_a100.py --fit`."
        ),
        "",
        "Fitted constants (tile 1x1 only): "
        + ", ".join(f"{k} = {getattr(constants, k):.4g}" for k in FITTED)
        + f" ({constants.fitted_on or 'defaults: not fitted'}).",
        "",
    ]
    lines += summary("limiters (the paper's model)", limiters, SUBSETS)
    lines += summary("throughput model (the default)", model, SUBSETS)
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    write_report(model, out / "throughput")
    write_report(limiters, out / "limiters")
    report = out / "report.md"
    findings = report.read_text().partition(FINDINGS)[2] if report.exists() else ""  # written by hand: kept
    report.write_text(
        text + "\nFull reports with plots: [throughput model](throughput/report.md), "
        "[limiters](limiters/report.md).\n" + (FINDINGS + findings if findings else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
