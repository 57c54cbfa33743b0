"""The command-line tool ``pystencils-perf``.

    pystencils-perf devices
    pystencils-perf accesses SPEC.py [--domain 64x64x64] [--align base|interior]
    pystencils-perf rank SPEC.py --device NAME [--threads N] [--blocks 32x2x16,...]
                         [--fold 1x1x1,1x1x2] [--align base|interior] [--backend auto|enum|isl]
                         [--json FILE] [--csv FILE] [--head N]

Every input error prints one line ``pystencils-perf: error: ...`` and exits with 2.
"""

from __future__ import annotations

import argparse
import sys

from .errors import PerfError
from .launch import parse_triple


def _triples(text: str, what: str):
    return [parse_triple(t.strip(), what) for t in text.split(",") if t.strip()]


def _cmd_devices(args) -> int:
    from .devices import list_devices

    print(f"{'name':<18} {'vendor':<7} {'arch':<8} {'SMs':>4} {'GHz':>5} {'L2 MiB':>7} {'L2 eff':>7} {'L1 KiB':>7} {'DRAM GB/s':>10}")
    for d in list_devices():
        print(
            f"{d.name:<18} {d.vendor:<7} {d.architecture:<8} {d.sm_count:>4} {d.clock_ghz:>5.2f} "
            f"{d.l2_capacity_bytes / 2**20:>7.1f} {d.l2_effective_capacity_bytes / 2**20:>7.1f} "
            f"{d.l1_capacity_bytes / 1024:>7.0f} {d.dram_bandwidth_gbs:>10.0f}"
        )
    return 0


def _load(args):
    from .spec import load_spec

    spec = load_spec(args.spec)
    domain = tuple(int(v) for v in args.domain.split("x")) if args.domain else spec.domain_shape
    return spec, domain


def _cmd_accesses(args) -> int:
    from . import harvest

    spec, domain = _load(args)
    model = harvest(spec.kernel, domain_shape=domain, align=args.align)
    print(model.summary())
    return 0


def _progress(items):
    """A progress bar on a terminal, nothing otherwise."""
    items = list(items)
    if not sys.stderr.isatty():
        yield from items
        return
    for i, item in enumerate(items):
        done = int(30 * i / max(len(items), 1))
        sys.stderr.write(f"\r[{'#' * done}{'.' * (30 - done)}] {i}/{len(items)}")
        sys.stderr.flush()
        yield item
    sys.stderr.write("\r" + " " * 60 + "\r")


def _cmd_rank(args) -> int:
    from .rank import rank

    spec, domain = _load(args)
    ranking = rank(
        spec.kernel,
        args.device,
        threads=args.threads,
        blocks=_triples(args.blocks, "block") if args.blocks else None,
        folds=_triples(args.fold, "fold") if args.fold else None,
        backend=args.backend,
        align=args.align,
        domain_shape=domain,
        progress=_progress,
    )
    print(ranking.table(head=args.head))
    if args.json:
        ranking.write_json(args.json)
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write(ranking.to_csv())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pystencils-perf", description="Predict and rank GPU launch configurations.")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("devices", help="list the device library").set_defaults(run=_cmd_devices)

    def spec_args(p):
        p.add_argument("spec", help="Python file defining `kernel` or `assignments`")
        p.add_argument("--domain", help="array shape of variable-size fields, e.g. 64x64x64")
        p.add_argument("--align", choices=("base", "interior"), default="base", help="field alignment (default base)")

    p = sub.add_parser("accesses", help="print every harvested access and the launch configuration")
    spec_args(p)
    p.set_defaults(run=_cmd_accesses)

    p = sub.add_parser("rank", help="rank block sizes and thread foldings")
    spec_args(p)
    p.add_argument("--device", required=True, help="device name, alias or .toml file")
    p.add_argument("--threads", type=int, help="threads per block (default 1024 stencils, 512 LBM)")
    p.add_argument("--blocks", help="explicit block sizes, e.g. 32x2x16,16x4x16")
    p.add_argument("--fold", help="thread foldings, e.g. 1x1x1,1x1x2 (default 1x1x1,1x2x1,1x1x2)")
    p.add_argument("--backend", default="auto", choices=("auto", "enum", "isl"), help="footprint backend (default auto)")
    p.add_argument("--json", help="write the ranking as JSON")
    p.add_argument("--csv", help="write the ranking as CSV")
    p.add_argument("--head", type=int, help="print only the best N candidates")
    p.set_defaults(run=_cmd_rank)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except PerfError as e:
        print(f"pystencils-perf: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
