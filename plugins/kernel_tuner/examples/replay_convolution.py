"""Tune Kernel Tuner's 15x15 convolution with the ModelGuided strategy, replayed from a cache: no GPU needed.

    python3 plugins/kernel_tuner/examples/replay_convolution.py

The measurements are an RTX A4000's, recorded by Kernel Tuner; the SPEC describes the kernel for the model.
"""

import warnings
from pathlib import Path

import kernel_tuner

from pystencils_perf_kernel_tuner.simulation import simulation_cache
from pystencils_perf_kernel_tuner.strategy import ModelGuided

ROOT = Path(__file__).resolve().parents[3]
cache, tune_params = simulation_cache(
    ROOT / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
)
strategy = ModelGuided(ROOT / "validation/a100_convolution/convolution.py", "RTX-A4000")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Kernel Tuner warns that simulation mode compiles nothing
    results, env = kernel_tuner.tune_kernel(
        "convolution_kernel",
        "__global__ void convolution_kernel() {}",
        (4096, 4096),
        [],
        tune_params,
        cache=cache,
        simulation_mode=True,
        strategy=strategy,
        strategy_options={"max_fevals": 10},
        quiet=True,
    )
timed = [r for r in results if isinstance(r["time"], float)]
best = min(timed, key=lambda r: r["time"])
print(
    f"{len(results)} configurations measured ({strategy.stop_reason}); best {best['time']:.4f} ms:",
    {name: best[name] for name in ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only")},
)
