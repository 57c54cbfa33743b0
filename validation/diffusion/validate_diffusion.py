"""Kernel Tuner's naive 2D diffusion on a GTX TITAN X and a GTX 1080 Ti: the default model's ranking of 21 block sizes.

    python3 validation/diffusion/validate_diffusion.py [--out validation/diffusion]

Data: `diffusion2d_kernel_tuner_notebooks.csv` of validation/data/external (KernelTuner/kernel_tuner
243ef4e, `doc/source/diffusion.ipynb` for the GTX TITAN X, `diffusion_use_optparam.ipynb` for the GTX 1080 Ti, parsed
from their stored outputs; Apache-2.0), the rows of the naive kernel, each block size once (the notebooks list the
best one again at the end). Each has one time, Kernel Tuner's mean over its runs, and the notebooks show no
spread, so there is no noise figure; the device files of both GPUs are datasheet figures and estimates, and
nothing is fitted on them. Kernel description: `diffusion2d_naive.py`.
Writes report.md and, per GPU, a report with plots.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the shared helpers

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-")

from convolution_summary import quality_row, external_data, HEADER  # noqa: E402
from pystencils_perf.measure.kernel_tuner import TunedRun, TunerData, load_tunable_spec  # noqa: E402
from pystencils_perf.validate import validate_tuned, write_report  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = external_data("diffusion2d_kernel_tuner_notebooks.csv")
#: the notebooks' GPU names and the device files that describe them
GPUS = {"GeForce GTX TITAN X": "GTX-TITAN-X", "GeForce GTX 1080 Ti": "GTX-1080-Ti"}


FINDINGS = """\
## Findings

Both GPUs cache a global load in L1 only where it takes the read-only path (the device files'
`global_loads_cached_in_l1`, from NVIDIA's Maxwell tuning guide; decided from the documentation before these rows
were ranked), and the kernel's plain pointers do not, so each of its five loads per point reaches L2: 22 B per
update, and the L2 bandwidth (an estimate per SM and clock from the V100) limits every block. With every load
cached in L1, as on Volta and later, the model ranked them at 0.061 (TITAN X) and 0.640 (1080 Ti), with MAPEs of
34.4 and 16.6 % (2026-11-27, the same device files with the flag at 1). What it still misses: blocks of 32
threads (16x2), which fill an SM with 32 blocks of one warp each, measure 0.60 and 0.49 of the best where the
model predicts 0.93 and 0.87; and blocks of 32 rows measure 0.73-0.78 (TITAN X) and 0.82-0.91 (1080 Ti) of the
best, where the model predicts them at the L2 bound like the others."""


def naive_runs(path: Path, gpu: str) -> TunerData:
    """The naive kernel's rows of one GPU, each block size once (a repeated row must repeat its time)."""
    times: dict[tuple[int, int], float] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["gpu"] != gpu or row["kernel_variant"] != "naive":
                continue
            block = (int(row["block_size_x"]), int(row["block_size_y"]))
            time_ms = float(row["time_ms"])
            if times.setdefault(block, time_ms) != time_ms:
                raise SystemExit(f"{path}: {gpu} block {block} has two times, {times[block]} and {time_ms} ms")
    runs = tuple(TunedRun({"block_size_x": bx, "block_size_y": by}, t) for (bx, by), t in sorted(times.items()))
    return TunerData(str(path), gpu, runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE), help="folder for report.md and the per-GPU reports")
    args = parser.parse_args(argv)
    out = Path(args.out)
    spec = load_tunable_spec(HERE / "diffusion2d_naive.py")
    lines = [
        "# Kernel Tuner's naive 2D diffusion on a GTX TITAN X and a GTX 1080 Ti",
        "",
        (
            f"Data: `{DATA.name}` (Kernel Tuner's diffusion notebooks), the naive kernel's 21 block sizes per GPU, "
            "one mean time each (the notebooks show no run-to-run spread). Default model, device files of datasheet figures and estimates, nothing fitted. "
            "Reproduce: `python3 validation/diffusion/validate_diffusion.py`."
        ),
        "",
    ]
    for gpu, device in GPUS.items():
        validation = validate_tuned(naive_runs(DATA, gpu), spec, device)
        report = write_report(validation, out / device)
        lines += [
            f"## {gpu} (`{device}`)",
            "",
            *HEADER,
            quality_row("all", validation),
            "",
            f"Full report with plots: [{device}]({device}/{report.path.name}).",
            "",
        ]
    text = "\n".join([*lines, FINDINGS, ""])
    print(text)
    (out / "report.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
