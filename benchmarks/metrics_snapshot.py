"""The metrics of the reference candidates, written to or compared with a JSON file.

    python benchmarks/metrics_snapshot.py --write FILE     # before a change of the estimator
    python benchmarks/metrics_snapshot.py --compare FILE   # after it: exits 1 on any difference

A speed change of the estimator must leave every metric of these candidates bit-identical, or explain the
difference (docs/performance.md). The candidates: star r=4 on a V100, r=1 on an H100, r=2 on an MI210, D3Q19 on
an A100 (the default spaces, both models), and the 15x15 convolution (`validation/a100_convolution/convolution.py`)
on an A100 for every tile of the cache and blocks guarded and unguarded.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import MISSING, fields
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-snapshot-")

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import lbm, star_3d  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec  # noqa: E402
from pystencils_perf.metrics import Metrics  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONVOLUTION_BLOCKS = [
    (16, 1, 1),
    (32, 4, 1),
    (48, 2, 1),
    (64, 8, 1),
    (128, 1, 1),
    (144, 4, 1),
    (256, 2, 1),
    (32, 16, 1),
]


def rankings():
    """(label, ranking) of every reference space."""
    for model in ("throughput", "limiters"):
        yield f"star r=4 V100 {model}", pp.rank(star_3d(4, (640, 512, 512)), "V100", model=model)
        yield f"star r=1 H100 {model}", pp.rank(star_3d(1, (512, 512, 512)), "H100", model=model)
        yield f"star r=2 MI210 {model}", pp.rank(star_3d(2, (256, 256, 256)), "MI210", model=model)
        yield f"D3Q19 A100 {model}", pp.rank(lbm.d3q19_srt((128, 128, 128)), "A100", model=model)
    spec = load_tunable_spec(ROOT / "validation/a100_convolution/convolution.py")
    for tsx in (1, 2, 3, 4):
        for tsy in (1, 2, 3, 4):
            kernel = spec.kernel({"tile_size_x": tsx, "tile_size_y": tsy, "read_only": (tsx + tsy) % 2})
            yield f"convolution {tsx}x{tsy} A100", pp.rank(kernel, "A100", blocks=CONVOLUTION_BLOCKS, folds=[(1, 1, 1)])


def snapshot() -> dict:
    out = {}
    for label, ranking in rankings():
        for c in ranking.candidates:
            metrics = {k: repr(v) for k, v in c.metrics.as_dict().items()}
            out[f"{label} {c.launch.label}"] = {"metrics": metrics, "lups": repr(c.prediction.lups_per_second)}
    return out


#: each metric's value where the estimator leaves it unset: a metric added since the snapshot was written differs
#: only where it is not this
_UNSET = {f.name: repr(f.default) for f in fields(Metrics) if f.default is not MISSING}


def same(before: dict | None, now: dict | None) -> bool:
    """Whether a candidate's entries agree; a metric one of them lacks counts as unset there."""
    if before is None or now is None:
        return before is now
    b, n = before["metrics"], now["metrics"]
    return before["lups"] == now["lups"] and all(b.get(k, _UNSET.get(k)) == n.get(k, _UNSET.get(k)) for k in b | n)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path)
    group.add_argument("--compare", type=Path)
    args = parser.parse_args(argv)
    now = snapshot()
    if args.write:
        args.write.write_text(json.dumps(now, indent=0, sort_keys=True))
        print(f"{len(now)} candidates written to {args.write}")
        return 0
    before = json.loads(args.compare.read_text())
    differ = [k for k in sorted(before.keys() | now.keys()) if not same(before.get(k), now.get(k))]
    for k in differ[:20]:
        print(f"differs: {k}\n  before {before.get(k)}\n  now    {now.get(k)}")
    print(f"{len(now)} candidates, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
