"""Reduce a benchmark_hub convolution cache to the rows validation/a100_convolution/convolution.py describes.

    python3 validation/data/external/reduce_convolution_cache.py IN.json.gz OUT.json.gz

Keeps Kernel Tuner's cache format (the header as it is, `cache` filtered) so that
`pystencils_perf.measure.kernel_tuner.read_kernel_tuner` reads the result: only rows with the
description's `fixed_parameters` (use_shmem 0, use_padding 0, use_cmem 1, 15x15 filter) and a
measured time (no failure markers). Written with gzip mtime 0, so the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import runpy
from pathlib import Path

DESCRIPTION = Path(__file__).resolve().parents[2] / "a100_convolution" / "convolution.py"


def described_rows(cache: dict, fixed: dict) -> dict:
    """The cache entries that ran (numeric time) with every fixed parameter at its described value."""
    return {
        key: entry
        for key, entry in cache.items()
        if isinstance(entry.get("time"), (int, float)) and all(entry.get(k) == v for k, v in fixed.items())
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    fixed = runpy.run_path(str(DESCRIPTION))["fixed_parameters"]
    with gzip.open(args.source, "rt") as fh:
        data = json.load(fh)
    kept = described_rows(data["cache"], fixed)
    with open(args.target, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
        fh.write(json.dumps({**data, "cache": kept}).encode())
    print(f"{args.source}: kept {len(kept)} of {len(data['cache'])} entries ({fixed}, valid runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
