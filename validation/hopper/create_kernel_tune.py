"""Wall time of ``create_kernel(..., tune=10)`` on a lent GPU, from the call to the returned kernel.

    python3 validation/hopper/create_kernel_tune.py {quickstart,d3q19} DEVICE OUT.json

In a fresh process (empty tuning record, pystencils and compiler caches as the caller set them): the imports,
then the first call (rank, compile, measure up to 10 candidates, regenerate), then a second call, which the
record on disk answers. ``quickstart`` is the README's kernel (`examples/quickstart.py`: 6-point average on
258^3 doubles), checked against numpy on random data after tuning and timed against pystencils' own default
launch (median of 15 CUDA-event timings each); ``d3q19`` is lbmpy's D3Q19 SRT kernel on 256^3 cells through
``create_lb_kernel``. Writes the numbers and the tuner's table as JSON.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from pathlib import Path

REPEATS = 15


def median_ms(launch) -> float:
    """Median of REPEATS CUDA-event timings of `launch()` after one untimed launch."""
    import cupy as cp

    launch()
    cp.cuda.Device().synchronize()
    start, end, times = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(REPEATS):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return sorted(times)[REPEATS // 2]


def quickstart(pp, ps, device: str, result: dict):
    import cupy as cp
    import numpy as np

    src, dst = ps.fields("src, dst: double[258, 258, 258]")
    neighbours = src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1]
    update = [ps.Assignment(dst[0, 0, 0], neighbours / 6)]
    calls = [lambda: pp.create_kernel(update, device=device, tune=10)] * 2
    kernel = timed_calls(calls, result)
    data = np.random.default_rng(7).uniform(-1, 1, (258,) * 3)
    src_gpu, dst_gpu = cp.asarray(data), cp.full((258,) * 3, np.nan)
    tuned = kernel.compile()
    tuned(src=src_gpu, dst=dst_gpu)
    inner = (slice(1, -1),) * 3
    reference = sum(np.roll(data, s, axis=a) for a in range(3) for s in (1, -1))[inner] / 6
    result["relative_error"] = float(np.linalg.norm(cp.asnumpy(dst_gpu)[inner] - reference) / np.linalg.norm(reference))
    default = ps.create_kernel(update, ps.CreateKernelConfig(target=ps.Target.CUDA))
    result["pystencils_default_block"] = list(default.get_launch_configuration().evaluate()[0])
    default = default.compile()
    result["tuned_ms"] = median_ms(lambda: tuned(src=src_gpu, dst=dst_gpu))
    result["pystencils_default_ms"] = median_ms(lambda: default(src=src_gpu, dst=dst_gpu))


def d3q19(pp, ps, device: str, result: dict):
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil

    config = LBMConfig(stencil=LBStencil(Stencil.D3Q19), method=Method.SRT, relaxation_rate=1.8)
    optimisation = LBMOptimisation(field_size=(256, 256, 256))
    calls = [lambda: pp.create_lb_kernel(config, optimisation, device=device, tune=10)] * 2
    timed_calls(calls, result)


def timed_calls(calls, result: dict):
    """Each call's wall time and what it printed to stderr (the tuner's table); the last call's kernel."""
    result["calls"] = []
    for call in calls:
        printed = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stderr(printed):
            kernel = call()
        seconds = time.perf_counter() - start
        choice = kernel.metadata["pystencils_perf"]
        result["calls"].append(
            {
                "wall_s": round(seconds, 3),
                "block": list(choice.launch.block),
                "fold": list(choice.launch.fold),
                "measured_now": bool(choice.tuning and choice.tuning.measured_now),
                "best_ms": choice.tuning.best_ms if choice.tuning else None,
                "stderr": printed.getvalue(),
            }
        )
        print(f"call {len(result['calls'])}: {seconds:.2f} s, {choice.summary()}", flush=True)
    return kernel


def main(argv=None) -> int:
    which, device, out = (argv or sys.argv[1:])[:3]
    result = {"kernel": which, "device": device}
    start = time.perf_counter()
    from pystencils_perf.tempcache import use_temporary_pystencils_cache

    use_temporary_pystencils_cache()  # unless the caller chose a folder: before pystencils reads it
    import pystencils as ps

    import pystencils_perf as pp

    result["import_s"] = round(time.perf_counter() - start, 3)
    {"quickstart": quickstart, "d3q19": d3q19}[which](pp, ps, device, result)
    Path(out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "calls"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
