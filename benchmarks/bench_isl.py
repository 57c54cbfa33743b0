"""Cost of the ISL footprint backend at real sizes, against enumeration (issue 16).

    python benchmarks/bench_isl.py [--limit SECONDS]

One candidate (block x fold) is one ``pystencils_perf.rank`` call restricted to
it, on a harvested model (kernel generation excluded), once per backend. The
table gives the milliseconds of each and whether both backends give equal
metrics. The exit status is non-zero when a candidate of the 512x384x256
float box stencil on H100 needs more than TARGET_SECONDS with isl, when any
candidate's metrics differ, or when isl runs past ``--limit``.
"""

from __future__ import annotations

import argparse
import sys
import time

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-bench-")

import pystencils_perf as pp  # noqa: E402
from limits import call_with_limit  # noqa: E402
from pystencils_perf.catalog import box_3d_assignments, lbm, star_3d  # noqa: E402

#: "a few seconds" per candidate for the box stencil (issue 16)
TARGET_SECONDS = 5.0


def cases():
    """(kernel name, grid, model builder, device, [(block, fold)], has a target)."""
    yield (
        "box27 float",
        "512x384x256",
        lambda: box_3d_assignments((512, 384, 256)),
        "H100",
        [
            ((32, 4, 8), (1, 1, 1)),
            ((16, 8, 8), (1, 1, 1)),
            ((64, 2, 8), (1, 1, 1)),
            ((128, 2, 4), (1, 1, 1)),
            ((32, 4, 8), (1, 2, 1)),
        ],
        True,
    )
    yield (
        "star r4 double",
        "640x512x512",
        lambda: star_3d(4, (640, 512, 512)),
        "H100",
        [((32, 4, 8), (1, 1, 1)), ((16, 8, 8), (1, 1, 1))],
        False,
    )
    yield (
        "D3Q19 SRT double",
        "128^3",
        lambda: lbm.d3q19_srt((128, 128, 128)),
        "H100",
        [((32, 4, 8), (1, 1, 1)), ((128, 2, 2), (1, 1, 1))],
        False,
    )


def _one_candidate(model, device, block, fold, backend):
    start = time.perf_counter()
    ranking = pp.rank(model, device, blocks=[block], folds=[fold], backend=backend)
    seconds = time.perf_counter() - start
    return seconds, ranking.candidates[0].metrics if ranking.candidates else None


def rows(limit_s):
    for name, grid, build, device, candidates, has_target in cases():
        model = pp.harvest(build())
        for block, fold in candidates:
            enum_s, enum_metrics = _one_candidate(model, device, block, fold, "enum")
            isl = call_with_limit(_one_candidate, limit_s, model, device, block, fold, "isl")
            row = {
                "kernel": name,
                "grid": grid,
                "device": device,
                "block": "x".join(map(str, block)),
                "fold": "x".join(map(str, fold)),
                "enum_ms": 1e3 * enum_s,
            }
            if isl is None:
                row.update(isl_ms=None, equal=None, ok=False)
            else:
                isl_s, isl_metrics = isl
                equal = isl_metrics == enum_metrics
                row.update(isl_ms=1e3 * isl_s, equal=equal, ok=equal and (not has_target or isl_s <= TARGET_SECONDS))
            yield row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per isl candidate before giving up")
    args = parser.parse_args(argv)
    print(f"target: box27 float on H100 <= {TARGET_SECONDS:g} s per candidate with isl; metrics equal everywhere")
    print(
        f"{'kernel':>17} {'grid':>12} {'device':>6} {'block':>8} {'fold':>6} {'enum ms':>8} {'isl ms':>9} {'equal':>5}"
    )
    ok = True
    for row in rows(args.limit):
        isl = f"{row['isl_ms']:9.0f}" if row["isl_ms"] is not None else f"{'> ' + format(args.limit, 'g') + ' s':>9}"
        equal = {True: "yes", False: "NO", None: "-"}[row["equal"]]
        flag = "" if row["ok"] else "  <- missed"
        print(
            f"{row['kernel']:>17} {row['grid']:>12} {row['device']:>6} {row['block']:>8} {row['fold']:>6} "
            f"{row['enum_ms']:8.1f} {isl} {equal:>5}{flag}",
            flush=True,
        )
        ok &= row["ok"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
