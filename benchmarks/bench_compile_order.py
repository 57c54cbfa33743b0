"""Ranking a register-tiled space with each launch's own registers: compiling in the model's order against
compiling every launch.

    python3 benchmarks/bench_compile_order.py [--all]

Kernel Tuner's shared-memory convolution described with a source of the kernel
(`validation/shared_memory/convolution_shmem_source.py`), so that each launch's registers come from compiling its
code (nvcc or the NVRTC wheels), as `pystencils-perf tune --replay` ranks a space: compiling in the model's order
until the `COMPILED_HEAD` fastest are certain (`spec_candidates`' ``compile_until_certain``), and compiling every
launch (``--compile-all``). Spaces: the H200's 320-configuration sample (`validation/hopper/data/h200`), both ways;
the shared-memory half of the A100's Kernel Tuner cache (2436 configurations), in order only unless ``--all``
(every launch takes about 20 minutes on two cores). Prints wall time and the candidates with their own registers
of each, and exits non-zero where a target is missed: in order, at most `COMPILED_SHARE_TARGET` of a space's
launches compiled and at most `SECONDS_TARGET` seconds (two cores); its `COMPILED_HEAD` fastest launches and their
times those of compiling every launch, where both ran.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-bench-compile-")

from pystencils_perf.adapters import cuda_compiler  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.launch import COMPILED_HEAD  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402
from pystencils_perf.tune.replay import replay_candidates  # noqa: E402
from pystencils_perf.tune.tuner import params_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "validation/shared_memory/convolution_shmem_source.py"
#: (label, cache, device, compile every launch by default)
SPACES = (
    ("H200 sample", ROOT / "validation/hopper/data/h200/convolution15_shmem_kernel_tuner_cache.json.gz", "H200", True),
    ("A100 cache", ROOT / "validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz", "A100", False),
)
#: in order, at most this share of a space's launches compiled
COMPILED_SHARE_TARGET = 0.3
#: seconds until a space is ranked with compiled registers in order (two cores)
SECONDS_TARGET = 120.0


def _ranked(data, spec, device, head):
    start = time.perf_counter()
    space = replay_candidates(data, spec, device, compile_until_certain=head)
    return space, time.perf_counter() - start


def same_fastest(ordered, every) -> bool:
    """Whether two rankings of a space (`SpecCandidates`) have the same `COMPILED_HEAD` fastest launches, in order,
    at the same times."""
    times = [{params_key(c.params): c.predicted_seconds for c in space.candidates} for space in (ordered, every)]
    fastest = [sorted(t, key=t.get)[:COMPILED_HEAD] for t in times]
    return fastest[0] == fastest[1] and all(abs(times[0][k] / times[1][k] - 1) <= 1e-9 for k in fastest[1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="compile every launch of the A100's space too (minutes)")
    args = parser.parse_args(argv)
    spec = load_tunable_spec(SPEC)
    print(f"{SPEC.name}, compiled launches' registers:")
    print("| space | configurations | compiled | wall s | candidates with their own registers | candidates |")
    print("|---|---|---|---|---|---|")
    failures = []
    for label, cache, device, every_by_default in SPACES:
        if cuda_compiler.compiler_for(get_device(device).compute_capability) is None:
            print(f"bench_compile_order: needs nvcc or the NVRTC wheels for {device}", file=sys.stderr)
            return 2
        data = read_kernel_tuner(cache)
        ordered, ordered_s = _ranked(data, spec, device, COMPILED_HEAD)
        configurations = len(ordered.candidates) + len(ordered.rejected)  # those the SPEC describes
        compiled = len(ordered.candidates) - ordered.not_compiled
        print(f"| {label} | {configurations} | in order | {ordered_s:.1f} | {compiled} | {len(ordered.candidates)} |")
        if compiled > COMPILED_SHARE_TARGET * configurations:
            failures.append(f"{label}: {compiled} compiled > {COMPILED_SHARE_TARGET:.0%} of {configurations}")
        if ordered_s > SECONDS_TARGET:
            failures.append(f"{label}: in order {ordered_s:.0f} s > {SECONDS_TARGET:.0f} s")
        if every_by_default or args.all:
            every, every_s = _ranked(data, spec, device, None)
            print(
                f"| {label} | {configurations} | every launch | {every_s:.1f} | {len(every.candidates)} "
                f"| {len(every.candidates)} |",
                flush=True,
            )
            if not same_fastest(ordered, every):
                failures.append(f"{label}: the {COMPILED_HEAD} fastest differ from those of compiling every launch")
    for failure in failures:
        print(f"target missed: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
