"""Held out: how much of the model's error on Kernel Tuner's own shared-memory convolution caches of RTX GPUs
(benchmark_hub, not in this repository) each launch's compiled registers and spills explain, on a sample.

    python3 validation/shared_memory/heldout_registers.py sample CACHE.json.gz SAMPLE.csv
    python3 validation/data/external/compile_convolution_registers.py convolution.cu sm_XY TABLE.csv \\
        CACHE.json.gz --shmem --function convolution_kernel --configurations SAMPLE.csv
    python3 validation/shared_memory/heldout_registers.py score CACHE.json.gz DEVICE TABLE.csv

``sample`` draws `SAMPLE_SIZE` of the cache's launches that ran or failed at run time (seed 0, before any was
compared); compiling the whole cache (6768 configurations, up to 10 s each for the large tiles) takes hours on two
cores. ``score`` ranks the sample's timed launches as `validate_shared_memory.py` does (Spearman, the pick's share
of the best, the best's predicted rank, MAPE): without registers, with the table's registers alone (spills left
out), and with registers and spills; and says how the registers predict the sample's launches that failed to run.
The kernel is `currently_unused/kernels/convolution.cu` of AutoTuningAssociation/benchmark_hub (compiled, not
copied); the table's first line names the compiler. Findings: `report.md`, "Held out".
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "data" / "external"))

import validate_shared_memory as shared  # noqa: E402  (sets the temporary pystencils cache)
from compile_convolution_registers import SHMEM_FIXED, SHMEM_KEY, check, read_table  # noqa: E402
from convolution_summary import CompiledRegisters  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.plugins import get_plugin_manager  # noqa: E402

#: launches compiled per cache: about ten minutes of nvcc on two cores
SAMPLE_SIZE = 200
SEED = 0


def draw_sample(cache: Path, out: Path) -> int:
    """Write `SAMPLE_SIZE` configurations of `cache` that ran or failed at run time (the compiler's launches)."""
    with gzip.open(cache, "rt") as fh:
        entries = list(json.load(fh)["cache"].values())
    compiled = [e for e in entries if isinstance(e["time"], (int, float)) or e["time"] == "RuntimeFailedConfig"]
    chosen = random.Random(SEED).sample(compiled, SAMPLE_SIZE)
    with open(out, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(SHMEM_KEY)
        writer.writerows([e[k] for k in SHMEM_KEY] for e in chosen)
    return len(chosen)


def score(cache: Path, device: str, table: Path) -> list[str]:
    """One table row per treatment of the registers, and the check of the launches that failed."""
    sample = set(read_table(table))
    measured, _ = shared.kernel_tuner_times(cache, {})
    measured = {config: ms for config, ms in measured.items() if config in sample}
    lines = [f"{len(measured)} timed launches of the {len(sample)} compiled ({cache.name}, {device})", ""]
    lines += ["| registers | launches (rejected) | Spearman | pick's share of the best | best's rank | MAPE % | |"]
    lines += ["|---|---|---|---|---|---|---|"]
    pm = get_plugin_manager()
    for label, plugin in (
        ("none", None),
        ("registers alone", CompiledRegisters(table=table, spills=False)),
        ("registers and spills", CompiledRegisters(table=table)),
    ):
        if plugin is not None:
            pm.register(plugin, name="heldout-registers")
        try:
            lines.append(shared.scores(label, shared.KT_SPEC, shared.KT_KEY, measured, device, shared.KT_FIXED, "", []))
        finally:
            if plugin is not None:
                pm.unregister(name="heldout-registers")
    lines += ["", check(table, [cache], get_device(device), SHMEM_FIXED, SHMEM_KEY, only=sample)]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    drawing = commands.add_parser("sample", help="draw the configurations to compile")
    drawing.add_argument("cache", type=Path)
    drawing.add_argument("out", type=Path)
    scoring = commands.add_parser("score", help="rank the sample with and without its compiled registers")
    scoring.add_argument("cache", type=Path)
    scoring.add_argument("device")
    scoring.add_argument("table", type=Path)
    args = parser.parse_args(argv)
    if args.command == "sample":
        print(f"{draw_sample(args.cache, args.out)} configurations written to {args.out}")
    else:
        print("\n".join(score(args.cache, args.device, args.table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
