"""Rank a loopy 3D 7-point stencil and compare its volumes with the pystencils version.

    python3 plugins/loopy/examples/loopy_vs_pystencils.py [--device V100] [--domain 256x128x64]

Needs no GPU: loopy only generates (never compiles or runs) the kernel.
"""

from __future__ import annotations

import argparse
import os

# pystencils and loopy (through pytools) keep disk caches; keep them out of the home directory.
from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

os.environ.setdefault("XDG_CACHE_HOME", use_temporary_pystencils_cache())

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import star_3d  # noqa: E402
from pystencils_perf.launch import parse_triple  # noqa: E402
from pystencils_perf_loopy import kernel_block, stencils  # noqa: E402

KEYS = ("dram_load_bytes_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "l1_cycles_per_lup")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="V100")
    parser.add_argument("--domain", default="256x128x64")
    args = parser.parse_args()
    domain = parse_triple(args.domain, "domain")

    knl = stencils.star_3d7(domain, block=(16, 4, 4))
    print(pp.harvest(knl).summary(), "\n")
    reference = star_3d(1, domain)
    print(
        f"{'block':>9}  {'generator':>10}  {'DRAM ld':>8} {'L2 ld':>7} {'L2 st':>7} {'L1 cyc':>7}   (B or cycles per Lup)"
    )
    for block in ((16, 4, 4), (32, 4, 2), (64, 2, 1)):
        split = stencils.star_3d7(domain, block)
        for name, kernel in (("loopy", split), ("pystencils", reference)):
            m = pp.rank(kernel, args.device, blocks=[block], folds=[(1, 1, 1)]).best.metrics
            print(f"{'x'.join(map(str, block)):>9}  {name:>10}  " + " ".join(f"{m.value(k):>7.3f}" for k in KEYS))
    print(f"\nthe loopy kernel was split for block {kernel_block(knl)}; the model ranks it re-split for every block:")
    ranking = pp.rank(knl, args.device)
    print("\n".join(ranking.table(head=5).splitlines()[:9]))  # the rejected candidates' reasons left out


if __name__ == "__main__":
    main()
