"""The command-line tool ``pystencils-perf``.

    pystencils-perf devices
    pystencils-perf accesses SPEC.py [--domain 64x64x64] [--align base|interior]
    pystencils-perf rank SPEC.py --device NAME [--threads N] [--blocks 32x2x16,...]
                         [--fold 1x1x1,1x1x2] [--align base|interior] [--backend auto|enum|isl]
                         [--json FILE] [--csv FILE] [--head N]
    pystencils-perf measure SPEC.py --device NAME --out DATA.csv [--blocks ...] [--fold 1x1x1]
                            [--repeats 7] [--warmup 3] [--ncu [--ncu-path ncu]]
    pystencils-perf validate DATA.csv --device NAME --spec SPEC.py [--out DIR] [--align ...]
    pystencils-perf calibrate DATA.csv --device NAME --spec SPEC.py [--out FILE.toml] [--align ...]

Every input error prints one line ``pystencils-perf: error: ...`` and exits with 2
(so does `measure` on a machine without cupy or a CUDA GPU).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

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


def _candidate_options(args, domain) -> dict:
    return dict(
        threads=args.threads,
        blocks=_triples(args.blocks, "block") if args.blocks else None,
        folds=_triples(args.fold, "fold") if args.fold else None,
        align=args.align,
        domain_shape=domain,
    )


def _cmd_accesses(args) -> int:
    from .harvesting import harvest

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
    ranking = rank(spec.kernel, args.device, backend=args.backend, progress=_progress, **_candidate_options(args, domain))
    print(ranking.table(head=args.head))
    if args.json:
        ranking.write_json(args.json)
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write(ranking.to_csv())
    return 0


def _ncu_child_argv(args) -> list[str]:
    """This very command, as the child that Nsight Compute profiles."""
    argv = [sys.executable, "-m", "pystencils_perf.cli", "measure", args.spec, "--device", args.device,
            "--out", os.devnull, "--ncu-pass", "--align", args.align, "--fold", args.fold]
    for flag, value in (("--domain", args.domain), ("--threads", args.threads), ("--blocks", args.blocks)):
        if value:
            argv += [flag, str(value)]
    return argv


def _cmd_measure(args) -> int:
    from .devices import get_device
    from .measure import launch_each_once, measure
    from .measure.dataset import write_dataset
    from .measure.gpu import require_cupy
    from .measure.ncu import profile

    require_cupy()  # one clear line and exit 2 on a machine without cupy or a GPU
    spec, domain = _load(args)
    options = _candidate_options(args, domain)
    if args.ncu_pass:
        launch_each_once(spec.kernel, args.device, **options)
        return 0
    run = measure(spec.kernel, args.device, warmup=args.warmup, repeats=args.repeats, progress=_progress, **options)
    rows = run.rows
    if args.ncu:
        counters = profile(_ncu_child_argv(args), run.launches, run.kernel_names, run.lattice_updates,
                           get_device(args.device).l2_sector_bytes, ncu=args.ncu_path)
        rows = [replace(r, values={**r.values, **counters[r.launch]}) for r in rows]
    write_dataset(args.out, rows)
    print(f"{len(rows)} candidates measured on {rows[0].run['device']}, written to {args.out}")
    print(f"{'block':>12} {'fold':>7} {'time ms':>9} {'GLup/s':>7}")
    for row in sorted(rows, key=lambda r: -r.values["glups"]):
        print(f"{'x'.join(map(str, row.launch.block)):>12} {'x'.join(map(str, row.launch.fold)):>7} "
              f"{float(row.run['time_ms']):>9.4f} {row.values['glups']:>7.2f}")
    return 0


def _validation_inputs(args):
    from .measure.dataset import read_dataset

    dataset = read_dataset(args.data)
    spec, domain = _load(args)
    return dataset, spec, dict(align=args.align, domain_shape=domain, backend=args.backend, progress=_progress)


def _cmd_validate(args) -> int:
    from .validate import validate, write_report

    dataset, spec, options = _validation_inputs(args)
    result = validate(dataset, spec.kernel, args.device, **options)
    print(result.table())
    if args.out:
        report = write_report(result, args.out, command=shlex.join(["pystencils-perf", *sys.argv[1:]]))
        if report.note:
            print(report.note)
        print(f"report: {report.path}" + (f" ({len(report.plots)} plots)" if report.plots else ""))
    return 0


def _cmd_calibrate(args) -> int:
    from .devices import get_device, load_device_file
    from .estimate.capacity import calibrate, write_device_file
    from .validate import validate

    dataset, spec, options = _validation_inputs(args)
    device = get_device(args.device)
    before = validate(dataset, spec.kernel, device, **options)
    points = [(p.measured.values, p.candidate.metrics) for p in before.pairs]
    result = calibrate(points, device.curves)
    out = Path(args.out or f"{Path(device.path).stem}-calibrated.toml")
    provenance = {"data": args.data, "points_in_data": len(dataset.rows), "spec": args.spec, "align": args.align,
                  "date": date.today().isoformat(), "base_device_file": Path(device.path).name}
    write_device_file(device, result, out, provenance)
    after = validate(dataset, spec.kernel, load_device_file(out), **options)
    print(result.table())
    print(f"wrote {out}")
    print(f"{'metric':<19} {'MAPE % before':>13} {'after':>7}")
    for b, a in zip(before.errors, after.errors):
        print(f"{b.metric.label:<19} {b.mape_percent:>13.2f} {a.mape_percent:>7.2f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .measure import DEFAULT_WARMUP, MIN_REPEATS

    parser = argparse.ArgumentParser(prog="pystencils-perf", description="Predict and rank GPU launch configurations.")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("devices", help="list the device library").set_defaults(run=_cmd_devices)

    def layout_args(p):
        p.add_argument("--domain", help="array shape of variable-size fields, e.g. 64x64x64")
        p.add_argument("--align", choices=("base", "interior"), default="base", help="field alignment (default base)")

    def spec_args(p):
        p.add_argument("spec", help="Python file defining `kernel` or `assignments`")
        layout_args(p)

    def candidate_args(p, default_folds):
        p.add_argument("--device", required=True, help="device name, alias or .toml file")
        p.add_argument("--threads", type=int, help="threads per block (default 1024 stencils, 512 LBM)")
        p.add_argument("--blocks", help="explicit block sizes, e.g. 32x2x16,16x4x16")
        p.add_argument("--fold", default=default_folds,
                       help=f"thread foldings, e.g. 1x1x1,1x1x2 (default {default_folds or '1x1x1,1x2x1,1x1x2'})")

    def data_args(p):
        p.add_argument("data", help="measured data set (CSV: bx,by,bz,fx,fy,fz,meas_...)")
        p.add_argument("--device", required=True, help="device name, alias or .toml file")
        p.add_argument("--spec", required=True, help="SPEC of the measured kernel (Python file defining `kernel`)")
        p.add_argument("--backend", default="auto", choices=("auto", "enum", "isl"), help="footprint backend")
        layout_args(p)

    p = sub.add_parser("accesses", help="print every harvested access and the launch configuration")
    spec_args(p)
    p.set_defaults(run=_cmd_accesses)

    p = sub.add_parser("rank", help="rank block sizes and thread foldings")
    spec_args(p)
    candidate_args(p, None)
    p.add_argument("--backend", default="auto", choices=("auto", "enum", "isl"), help="footprint backend (default auto)")
    p.add_argument("--json", help="write the ranking as JSON")
    p.add_argument("--csv", help="write the ranking as CSV")
    p.add_argument("--head", type=int, help="print only the best N candidates")
    p.set_defaults(run=_cmd_rank)

    p = sub.add_parser("measure", help="time every candidate on this machine's GPU (cupy), optionally with ncu counters")
    spec_args(p)
    candidate_args(p, "1x1x1")
    p.add_argument("--out", required=True, help="data set to write (CSV)")
    p.add_argument("--repeats", type=int, default=MIN_REPEATS,
                   help=f"timed runs per candidate, median reported (at least {MIN_REPEATS})")
    p.add_argument("--warmup", type=int, default=DEFAULT_WARMUP,
                   help=f"untimed runs per candidate first (default {DEFAULT_WARMUP})")
    p.add_argument("--ncu", action="store_true", help="also collect Nsight Compute volume counters")
    p.add_argument("--ncu-path", default="ncu", help="the ncu executable (default: ncu on PATH)")
    p.add_argument("--ncu-pass", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(run=_cmd_measure)

    p = sub.add_parser("validate", help="compare predictions with a measured data set; report and plots")
    data_args(p)
    p.add_argument("--out", help="folder for report.md and the plots")
    p.set_defaults(run=_cmd_validate)

    p = sub.add_parser("calibrate", help="fit the capacity-miss curves to a measured data set; write a device file")
    data_args(p)
    p.add_argument("--out", help="device file to write (default DEVICE-calibrated.toml here)")
    p.set_defaults(run=_cmd_calibrate)
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
