"""Tune the hand-written 3D 25-point stencil (star3d.cu) with kernel_tuner, timing only what the model keeps.

    python3 plugins/kernel_tuner/examples/tune_star3d.py --dry-run          # no GPU: print the pruned space
    python3 plugins/kernel_tuner/examples/tune_star3d.py --device H100      # GPU: brute force vs pruned

The kernel is described for the model with pystencils-perf-cuda (its accesses,
written once here); kernel_tuner compiles star3d.cu. Without --dry-run this
needs a GPU, kernel_tuner and cupy (``pip install -e 'plugins/kernel_tuner[tune]' cupy-cuda12x``):
it times the whole space (kernel_tuner's brute force), then only the kept
configurations, and prints the time each took and the best configuration each found.
"""

from __future__ import annotations

import argparse
import os
import time

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache()

from pystencils_perf.launch import parse_triple  # noqa: E402
from pystencils_perf_cuda import Array, CudaKernel  # noqa: E402
from pystencils_perf_kernel_tuner import prune  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RADIUS = 4
TUNE_PARAMS = {
    "block_size_x": [8, 16, 32, 64, 128, 256],
    "block_size_y": [1, 2, 4, 8, 16, 32],
    "block_size_z": [1, 2, 4, 8, 16, 32, 64],
    "tile_size_z": [1, 2, 4],
}
FOLD_PARAMS = {"tile_size_z": "z"}


def described(domain, radius: int = RADIUS) -> CudaKernel:
    """star3d.cu for the model: one thread per point (the model folds it as tile_size_z does)."""
    offsets = [(0, 0, 0)] + [
        tuple(sign * r if a == axis else 0 for a in range(3))
        for r in range(1, radius + 1)
        for axis in range(3)
        for sign in (-1, 1)
    ]
    g = radius
    return CudaKernel(
        name=f"star3d_r{radius}",
        arrays=tuple(Array(n, "double", (f"nz + {2 * g}", f"ny + {2 * g}", f"nx + {2 * g}")) for n in ("src", "dst")),
        threads=("nx", "ny", "nz"),
        indices={a: f"blockIdx.{a} * blockDim.{a} + threadIdx.{a}" for a in "xyz"},
        guard="x < nx && y < ny && z < nz",
        loads=tuple(f"src[z + {g + dz}][y + {g + dy}][x + {g + dx}]" for dx, dy, dz in offsets),
        stores=(f"dst[z + {g}][y + {g}][x + {g}]",),
        constants=dict(zip(("nx", "ny", "nz"), domain)),
        flops_per_lup=len(offsets),
    )


def tune(domain, restrictions=None):
    """Time the configurations with kernel_tuner (on a GPU); (results, wall seconds)."""
    import kernel_tuner
    import numpy as np

    nx, ny, nz = domain
    g = RADIUS
    src = np.random.default_rng(0).random((nz + 2 * g, ny + 2 * g, nx + 2 * g))
    dst = np.zeros_like(src)
    with open(os.path.join(HERE, "star3d.cu")) as fh:
        source = fh.read()
    start = time.perf_counter()
    results, _ = kernel_tuner.tune_kernel(
        "star3d", source, (nx, ny, nz), [dst, src], TUNE_PARAMS,
        grid_div_z=["block_size_z", "tile_size_z"], restrictions=restrictions, lang="CUPY",
        compiler_options=[f"-DNX={nx}", f"-DNY={ny}", f"-DNZ={nz}", f"-DR={g}"], strategy="brute_force", quiet=True,
    )  # fmt: skip
    return [r for r in results if isinstance(r.get("time"), (int, float))], time.perf_counter() - start


def best_of(results) -> str:
    best = min(results, key=lambda r: r["time"])
    return ", ".join(f"{k}={best[k]}" for k in TUNE_PARAMS) + f": {best['time']:.3f} ms"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="V100", help="device the model ranks for (pystencils-perf devices)")
    parser.add_argument("--domain", default="640x512x512", help="interior points x, y, z")
    parser.add_argument("--top-k", type=int, default=10, help="launches kept")
    parser.add_argument("--dry-run", action="store_true", help="only print the pruned space (no GPU, no kernel_tuner)")
    args = parser.parse_args(argv)
    domain = parse_triple(args.domain, "domain")

    start = time.perf_counter()
    pruned = prune(described(domain), TUNE_PARAMS, args.device, top_k=args.top_k, fold_params=FOLD_PARAMS)
    print(pruned.report())
    print(f"pruning took {time.perf_counter() - start:.1f} s")
    if args.dry_run:
        return
    full, full_seconds = tune(domain)
    kept, kept_seconds = tune(domain, pruned.restrictions)
    print(f"brute force: {len(full)} configurations in {full_seconds:.0f} s, best {best_of(full)}")
    print(f"pruned:      {len(kept)} configurations in {kept_seconds:.0f} s, best {best_of(kept)}")
    ratio = min(r["time"] for r in kept) / min(r["time"] for r in full)
    print(f"the best kept configuration takes {ratio:.3f}x the time of the best of all")


if __name__ == "__main__":
    main()
