"""Launch each convolution binary of a folder twice, for a profiler: what Nsight Compute reads of the H100's launches.

    ncu --set full --csv --page raw --kernel-name regex:convolution_kernel \
        python3 validation/hopper/convolution_profile.py CUBIN_DIR [--shmem] [--sample SAMPLE.csv] > raw.csv
    ncu --profile-from-start off ... convolution_profile.py CUBIN_DIR --timed-only ...

The binaries and the launch are `convolution_on_gpu.py`'s (same folder layout, same grid, arguments and weights,
``--shmem`` and ``--sample`` as there): its checked launch and one timed launch, so a profiled launch is one that
computed the convolution. With ``--timed-only`` the timed launch alone runs inside the profiler's range
(cudaProfilerStart/Stop), which halves the profiling time of a long sample.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cupy as cp  # noqa: E402
import cupyx.profiler  # noqa: E402

from convolution_on_gpu import FUNCTION, GLOBAL, SHARED, configurations, time_configuration, Problem  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cubin_dir", type=Path)
    parser.add_argument("--shmem", action="store_true", help="the shared-memory rows: binaries BX_BY_TX_TY_RO_PAD")
    parser.add_argument("--sample", type=Path, help="only the configurations of this CSV")
    parser.add_argument("--timed-only", action="store_true", help="the profiler's range around the timed launch alone")
    args = parser.parse_args(argv)
    layout = SHARED if args.shmem else GLOBAL
    problem = Problem(np.random.default_rng(2026))
    around = cupyx.profiler.profile if args.timed_only else contextlib.nullcontext
    for config, cubin in configurations(args.cubin_dir, args.sample, layout).items():
        if cubin is None:
            print(config, "skipped: no binary", file=sys.stderr)
            continue
        # a launch the driver refuses stops the profiled program under ncu: skip what cannot run (the driver's own
        # limit for this binary, its registers included)
        if cp.RawModule(path=str(cubin)).get_function(FUNCTION).max_threads_per_block < config[0] * config[1]:
            print(config, "skipped: more threads than the binary can launch", file=sys.stderr)
            continue
        entry = time_configuration(config, cubin, problem, 1, layout, around)
        print(config, entry["time"], entry.get("relative_error"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
