"""How many launches `spec_candidates(..., compile_until_certain=10)` compiles, and whether its 10 fastest are those
of compiling every launch, on the repository's convolution spaces.

    python3 validation/tuning/compile_order.py [CACHE ...]

The compiler's reports here are the compiled-register tables of `../data/external` (`convolution_summary.
CompiledRegisters`, and KTT's registers from its counters, `KttRegisters`), read through the same
`perf_launch_resources` hook a CUDA description's ``block_size_names`` compiles through, so that every launch of
a space of thousands can be "compiled" to compare. For each space: its configurations, the candidates with their
own registers (and the launches rejected) compiling in the model's order until the 10 fastest are certain and
compiling every launch, whether those 10 and their times are the same, and the measured share of the best of the
first of each (ties at their worst). Further Kernel Tuner caches
(held out, e.g. benchmark_hub's whole MI250X, W6600 and W7800 caches, `--device` where they name no GPU) are
replayed with `../a100_convolution/convolution_any.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "validation"))  # convolution_summary: the compiled register tables
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_compile_order: the check that the fastest are the same

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-compile-order-")

from bench_compile_order import same_fastest  # noqa: E402
from convolution_summary import ktt_padding_0_rows, use_compiled_registers  # noqa: E402
from pystencils_perf.launch import COMPILED_HEAD  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.tune.replay import ReplaySource, spec_candidates  # noqa: E402
from pystencils_perf.tune.tuner import params_key  # noqa: E402

VALIDATION = ROOT / "validation"
EXTERNAL = VALIDATION / "data/external"
ANY = VALIDATION / "a100_convolution/convolution_any.py"
#: (label, SPEC, cache) of the repository's Kernel Tuner spaces
SPACES = (
    ("A100, whole cache", ANY, EXTERNAL / "a100_convolution15_kernel_tuner_cache.json.gz"),
    ("RTX A4000, without shared memory", ANY, EXTERNAL / "a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"),
    ("RTX A6000, without shared memory", ANY, EXTERNAL / "a6000_convolution15_kernel_tuner_cache_noshmem.json.gz"),
    (
        "H200, shared-memory sample",
        VALIDATION / "a100_convolution/convolution_shmem.py",
        VALIDATION / "hopper/data/h200/convolution15_shmem_kernel_tuner_cache.json.gz",
    ),
)
KTT_SPEC = VALIDATION / "rtx2080ti_convolution/convolution_shmem.py"
KTT_KEY = ("BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_SIZE_X", "TILE_SIZE_Y", "READ_ONLY", "PADDING")


def row(label: str, configurations: list[dict], spec, device: str, measured: dict) -> str:
    """One table row: `measured` maps `params_key` to the measured time (None: failed)."""
    every = spec_candidates(configurations, spec, device)
    ordered = spec_candidates(configurations, spec, device, compile_until_certain=COMPILED_HEAD)
    same = same_fastest(ordered, every)
    times = [{params_key(c.params): c.predicted_seconds for c in s.candidates} for s in (every, ordered)]
    best = min(t for t in measured.values() if t)
    picks = []
    for t in times:
        tied = [k for k in t if t[k] <= min(t.values()) * (1 + 1e-9)]
        picks.append(f"{100 * best / max(measured.get(k) or float('inf') for k in tied):.1f} %")
    return (
        f"| {label} | {len(configurations)} | {len(ordered.candidates) - ordered.not_compiled} "
        f"({len(ordered.rejected)} rejected) | {len(every.candidates)} ({len(every.rejected)} rejected) | "
        f"{'yes' if same else 'no'} | {picks[0]} / {picks[1]} |"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="*", type=Path, help="held-out Kernel Tuner caches of the convolution")
    parser.add_argument("--device", help="the GPU of the held-out caches, where they name none (e.g. MI250X)")
    args = parser.parse_args(argv)
    use_compiled_registers()
    print(
        "| space | configurations | candidates compiled in order (rejected) | compiling every launch (rejected) "
        f"| the {COMPILED_HEAD} fastest the same | measured share of the best: first of every launch compiled / "
        "in order |"
    )
    print("|---|---|---|---|---|---|")
    held_out = [(f"held out: {c.name}", ANY, c, args.device) for c in args.caches]
    for label, spec_path, cache, device in [*((*space, None) for space in SPACES), *held_out]:
        data = read_kernel_tuner(cache)
        configurations = [run.params for run in data.runs] + list(data.failed)
        device = device or data.device_name
        measured = ReplaySource(data, device).times
        print(row(label, configurations, load_tunable_spec(spec_path), device, measured), flush=True)
    rows = ktt_padding_0_rows()
    configurations = [{k: int(r[k]) for k in KTT_KEY} for r in rows]
    measured = {params_key(p): float(r["duration_us"]) for p, r in zip(configurations, rows)}
    print(row("RTX 2080 Ti, KTT", configurations, load_tunable_spec(KTT_SPEC), "RTX-2080-Ti", measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
