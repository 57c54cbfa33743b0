"""What `pystencils_perf.create_kernel` of the README's quick start costs over `pystencils.create_kernel`.

    python benchmarks/quick_start.py   # prints the numbers as JSON

Run as a script it is what a user's script pays, lazy imports included: a new process that has imported
pystencils and pystencils_perf and nothing else (`bench_rank.py`'s two create_kernel rows: with an empty cache
folder, and again with the folder the first filled).
"""

from __future__ import annotations

import json
import time

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-bench-")

import pystencils as ps  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from usage import cpu_and_peak  # noqa: E402


def quick_start_overhead() -> tuple[float, float, float, int]:
    """What `pp.create_kernel` of the README's quick start (a 7-point stencil on 258^3 doubles, H100) costs over
    `pystencils.create_kernel` of the same assignments: wall seconds, CPU seconds (this process and its children),
    and pystencils' own seconds and the candidates ranked."""
    src, dst = ps.fields("src, dst: double[258, 258, 258]")
    update = ps.Assignment(
        dst[0, 0, 0], (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1]) / 6
    )
    start = time.perf_counter()
    ps.create_kernel([update], ps.CreateKernelConfig(target=ps.Target.CUDA))
    pystencils_s = time.perf_counter() - start
    cpu_before, _ = cpu_and_peak()
    start = time.perf_counter()
    kernel = pp.create_kernel([update], device="H100")
    overhead_s = time.perf_counter() - start - pystencils_s
    cpu_after, _ = cpu_and_peak()
    return overhead_s, cpu_after - cpu_before, pystencils_s, len(kernel.metadata["pystencils_perf"].ranking.candidates)


if __name__ == "__main__":
    overhead_s, cpu_s, pystencils_s, candidates = quick_start_overhead()
    print(
        json.dumps(
            {
                "overhead_s": overhead_s,
                "cpu_s": cpu_s,
                "peak": cpu_and_peak()[1],
                "candidates": candidates,
                "pystencils_s": pystencils_s,
            }
        )
    )
