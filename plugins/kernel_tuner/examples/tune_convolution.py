"""Tune a 15x15 convolution on this machine's NVIDIA GPU with the ModelGuided strategy (needs cupy and a GPU).

    python3 plugins/kernel_tuner/examples/tune_convolution.py --device A100 [--budget 20]

The kernel is `validation/a100_convolution/convolution.cu` (our re-implementation of Kernel Tuner's convolution
without shared memory, its tunable parameters as macros); the SPEC beside it describes it for the model.
`replay_convolution.py` is the same search without a GPU.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "validation/a100_convolution"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", required=True, help="the pystencils-perf device this GPU is (e.g. A100, H100)")
    parser.add_argument("--budget", type=int, default=20, help="measurements at most (default 20)")
    args = parser.parse_args()
    try:
        import cupy  # noqa: F401  (Kernel Tuner's CUPY backend)
        import kernel_tuner
    except ImportError as e:
        print(f"tune_convolution: needs a GPU with cupy and kernel_tuner installed ({e})", file=sys.stderr)
        return 2

    from pystencils_perf_kernel_tuner.strategy import ModelGuided

    image, taps = 4096, 15
    rng = np.random.default_rng(0)
    out = np.zeros(image * image, dtype=np.float32)
    inp = rng.random((image + taps - 1) ** 2, dtype=np.float32)
    weights = rng.random(taps * taps, dtype=np.float32)
    tune_params = {
        "block_size_x": [16, 32, 48, 64, 128, 256],
        "block_size_y": [1, 2, 4, 8, 16],
        "tile_size_x": [1, 2, 3, 4],
        "tile_size_y": [1, 2, 3, 4],
        "read_only": [0, 1],
    }
    strategy = ModelGuided(FOLDER / "convolution.py", args.device)
    results, _ = kernel_tuner.tune_kernel(
        "convolution15",
        str(FOLDER / "convolution.cu"),
        (image, image),
        [out, inp],
        tune_params,
        lang="CUPY",
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        cmem_args={"weights": weights},
        restrictions=["block_size_x * block_size_y <= 1024"],
        strategy=strategy,
        strategy_options={"max_fevals": args.budget},
        quiet=True,
    )
    timed = [r for r in results if isinstance(r["time"], float)]
    best = min(timed, key=lambda r: r["time"])
    print(
        f"{len(results)} configurations measured ({strategy.stop_reason}); best {best['time']:.4f} ms:",
        {name: best[name] for name in tune_params},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
