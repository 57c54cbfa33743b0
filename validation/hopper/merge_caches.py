"""Merge Kernel Tuner caches of one kernel on one GPU, timed in parts, into the cache of the whole space.

    python3 validation/hopper/merge_caches.py OUT.json.gz PART.json.gz [PART.json.gz ...]

The parts (`convolution_on_gpu.py`'s caches of disjoint samples, e.g. two leases) must share the device, the kernel,
the problem size and the tunable parameters' names, and hold no configuration twice: each is a measurement of its
own, so a second one would silently replace the first. The merged file keeps every part's provenance (under
``provenance["parts"]``, in the given order) and the union of the tunable parameters' values, so that Kernel Tuner's
simulation mode and `benchmarks/bench_tune.py` replay it as one cache. The repository keeps the parts only (a large
data file is stored once): `../shared_memory/tune_shared_memory.py` merges them into a temporary file
(`write_merged`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from pystencils_perf.errors import PerfError
from pystencils_perf.outputs import replacing_file

#: what every part must agree on
SHARED = ("device_name", "kernel_name", "problem_size", "tune_params_keys", "objective")


def merged(parts: list[tuple[str, dict]]) -> dict:
    """One cache of `parts` (name, cache); raises ValueError naming the part that does not fit."""
    first_name, first = parts[0]
    out = {k: first[k] for k in SHARED}
    out["tune_params"] = {k: set() for k in first["tune_params_keys"]}
    out["provenance"] = {"parts": []}
    out["cache"] = {}
    for name, part in parts:
        for k in SHARED:
            if part.get(k) != first.get(k):
                raise ValueError(f"{name}: {k} {part.get(k)!r} differs from {first_name}'s {first.get(k)!r}")
        twice = sorted(set(part["cache"]) & set(out["cache"]))
        if twice:
            raise ValueError(f"{name}: configuration {twice[0]} is in an earlier part ({len(twice)} in all)")
        out["cache"].update(part["cache"])
        for k, values in part["tune_params"].items():
            out["tune_params"][k].update(values)
        out["provenance"]["parts"].append({"file": name, **part.get("provenance", {})})
    out["tune_params"] = {k: sorted(v) for k, v in out["tune_params"].items()}
    return out


def write_merged(out: Path, paths: list[Path]) -> int:
    """`merged` of the caches at `paths`, written to `out` whole; how many configurations. Raises ValueError or
    PerfError (a file that cannot be read or written) naming the file."""
    parts = []
    for path in paths:
        try:
            with gzip.open(path, "rt") as fh:
                parts.append((path.name, json.load(fh)))
        except (OSError, ValueError) as error:  # json's errors are ValueErrors
            raise ValueError(f"{path}: not a gzipped Kernel Tuner cache ({error})") from None
    cache = merged(parts)
    with replacing_file(out, "wb") as fh, gzip.open(fh, "wt") as gz:
        json.dump(cache, gz)
    return len(cache["cache"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the merged cache to write (.json.gz)")
    parser.add_argument("parts", type=Path, nargs="+", help="the caches to merge")
    args = parser.parse_args(argv)
    try:
        count = write_merged(args.out, args.parts)
    except (OSError, ValueError, KeyError, PerfError) as error:
        print(f"merge_caches: {error}", file=sys.stderr)
        return 2
    print(f"{args.out}: {count} configurations from {len(args.parts)} parts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
