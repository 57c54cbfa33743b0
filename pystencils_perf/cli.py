"""The command-line tool ``pystencils-perf``: ``devices``, ``plugins``, ``accesses``, ``rank``, ``measure``,
``validate``, ``calibrate`` and ``tune``, with the options `build_parser` defines (``pystencils-perf --help``;
docs/cli.md is generated from it).

Every input error prints one line ``pystencils-perf: error: ...`` and exits with 2
(so does `measure` on a machine without cupy or a CUDA GPU). Options and output
paths (their folder must take new files; no path twice, none onto an input) are
checked while parsing, before any kernel is generated or ranked. Outputs are
written whole or not at all (`outputs`), so Ctrl-C prints one line, exits with
130 and leaves only complete files.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import sys
import warnings
from dataclasses import replace
from datetime import date
from pathlib import Path

from . import __version__
from .errors import ConfigurationError, PerfError, PerfWarning
from .launch import COMPILED_HEAD, DEFAULT_MODEL, Layout, RankOptions, parse_triples
from .outputs import check_writable, check_writable_file, is_special, replacing_file, write_text
from .parallel import EXECUTORS
from .tempcache import use_temporary_pystencils_cache


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (a `ConfigurationError`) instead of the usage block and an exit, and
    whose arguments may be added when it is first used (`add_arguments_later`)."""

    _add_later = None

    def error(self, message):
        raise ConfigurationError(f"{message} (see {self.prog} --help)")

    def add_arguments_later(self, add_arguments) -> None:
        """Call ``add_arguments(self)`` only once this parser parses or prints its usage or help: a subcommand's
        arguments may need the plugins, which the other subcommands should not wait for."""
        self._add_later = add_arguments

    def _add_pending_arguments(self) -> None:
        add, self._add_later = self._add_later, None
        if add is not None:
            add(self)

    def parse_known_args(self, args=None, namespace=None):
        self._add_pending_arguments()
        return super().parse_known_args(args, namespace)

    def format_usage(self):
        self._add_pending_arguments()
        return super().format_usage()

    def format_help(self):
        self._add_pending_arguments()
        return super().format_help()


def _argument_type(parse):
    """An argparse ``type=`` from a parser that raises `PerfError`: argparse then names the option."""

    def convert(text: str):
        try:
            return parse(text)
        except PerfError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = parse.__name__
    return convert


def _int_at_least(minimum: int):
    """A parser of whole numbers of at least `minimum`, checked while parsing (before a GPU or a SPEC is asked)."""

    def int_at_least(text: str) -> int:
        if not re.fullmatch(r"\s*\d+\s*", text) or int(text) < minimum:
            wanted = {0: "a non-negative integer", 1: "a positive integer"}.get(
                minimum, f"an integer of at least {minimum}"
            )
            raise ConfigurationError(f"must be {wanted}, got {text!r}")
        return int(text)

    return int_at_least


_positive_int = _int_at_least(1)


def parse_domain(text: str) -> tuple[int, ...]:
    """`kernel.parse_domain`, imported only for a ``--domain``: the kernel model imports sympy."""
    from .kernel import parse_domain

    return parse_domain(text)


def _triples(what: str):
    def triples(text: str) -> list[tuple[int, int, int]]:
        return list(parse_triples(text, what))

    return triples


def _parameters(text: str) -> dict:
    """``NAME=VALUE,...``: a Kernel Tuner configuration's tunable parameters, each value a number where it reads as
    one (as a Kernel Tuner cache holds them), else text."""
    from .measure.kernel_tuner import number_or_text

    params = {}
    for item in text.split(","):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name.isidentifier() or not value:
            raise ConfigurationError(f"give NAME=VALUE pairs separated by commas, e.g. tile_size_x=2, got {item!r}")
        if name in params:
            raise ConfigurationError(f"parameter {name!r} is given twice")
        params[name] = number_or_text(value)
    return params


def _path(text: str) -> Path:
    """`text` as a path, refused where empty: ``Path("")`` is the current folder, which messages would blame."""
    if not text:
        raise ConfigurationError("the path is empty")
    return Path(text)


def _input_path(text: str) -> str:
    """A path to read, as text, refused where empty (`_path`)."""
    return str(_path(text))


def _existing_folder(folder: Path) -> None:
    if not folder.exists():
        raise ConfigurationError(f"folder {folder} does not exist")
    if not folder.is_dir():
        raise ConfigurationError(f"{folder} is not a folder")


def _output_file(text: str) -> str:
    """A file to write: its folder exists and takes new files (or it is /dev/stdout or the like), and it is
    not itself a folder."""
    path = _path(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        raise ConfigurationError(f"{text} is a folder, not a file")
    _existing_folder(path.parent)
    check_writable_file(path)
    return text


def _existing_file(text: str) -> str:
    path = _path(text)
    if path.is_dir():
        raise ConfigurationError(f"{text} is a folder, not a file")
    if not path.exists():
        raise ConfigurationError(f"file {text} does not exist")
    if not path.is_file():
        raise ConfigurationError(f"{text} is not a regular file")
    return text


def _output_folder(text: str) -> str:
    """A folder to write into (created with its parents): neither it nor its nearest existing parent is a file,
    and that parent takes new files (the report is written beside the folder first, see `replacing_folder`)."""
    path = _path(text)
    if path.exists() and not path.is_dir():
        raise ConfigurationError(f"{path} is a file, not a folder")
    nearest = next(p for p in path.absolute().parents if p.exists())
    if not nearest.is_dir():
        raise ConfigurationError(f"{nearest} is not a folder")
    check_writable(nearest)
    return text


_DASH_VALUE = re.compile(r"-\d")


def _attach_dash_values(argv: list[str]) -> list[str]:
    """``--blocks -32x1x1`` as ``--blocks=-32x1x1``.

    argparse takes a value that starts with a dash for an option and answers with
    its usage; attached, the value reaches its check, which names what is wrong.
    """
    joined: list[str] = []
    for token in argv:
        previous = joined[-1] if joined else ""
        if _DASH_VALUE.match(token) and previous.startswith("--") and previous != "--" and "=" not in previous:
            joined[-1] = f"{previous}={token}"
        else:
            joined.append(token)
    return joined


def _cmd_devices(args) -> int:
    from .devices.report import run

    return run(args)


def _cmd_plugins(args) -> int:
    """Every registered plugin with the models, filters and backends it offers."""
    from .estimate.plugin import footprint_backends
    from .plugins import blocked_names, get_plugin_manager

    pm = get_plugin_manager()
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: str(item[0])):
        hooks = sorted(impl.name for impl in (c for c in pm.get_hookcallers(plugin) or ()))
        print(f"{name}: {getattr(plugin, '__name__', type(plugin).__name__)} ({', '.join(hooks)})")
    for title, offered in (
        ("models (--model)", pm.hook.perf_models()),
        ("filters (--prune)", pm.hook.perf_prune_filters()),
    ):
        print(title)
        for names in offered:
            for key, description in sorted((names or {}).items()):
                print(f"  {key:<12} {description}")
    print(f"footprint backends (--backend): {', '.join(footprint_backends())}")
    blocked = blocked_names()
    if blocked:
        print(f"blocked: {', '.join(blocked)}")
    return 0


def _load(args):
    """The SPEC's kernel and domain; with ``--params``, the kernel of those tunable parameters of a SPEC of Kernel
    Tuner data (`kernel_for`, with its fixed parameters)."""
    from .spec import Spec, load_spec

    if getattr(args, "params", None) is None:
        spec = load_spec(args.spec)
    else:
        from .measure.kernel_tuner import load_tunable_spec

        spec = Spec(args.spec, load_tunable_spec(args.spec).kernel(args.params), None)
    domain = args.domain or spec.domain_shape
    return spec, domain


def _check_threads(args) -> None:
    """``--threads`` within the device's threads per block, checked before the SPEC is run."""
    from .devices import get_device
    from .launch import check_threads

    if args.threads:
        check_threads(args.threads, get_device(args.device), "argument --threads")


#: `RankOptions.of`'s parameters by the dests of the options that give them (a command may lack some)
_RANK_OPTION_DESTS = {
    "threads": "threads",
    "blocks": "blocks",
    "folds": "fold",
    "backend": "backend",
    "model": "model",
    "prune": "prune",
}


def _rank_options(args, **fixed) -> RankOptions:
    """What the command's options ask of the ranking, built once and passed on; an option the command lacks or
    was not given takes `RankOptions`' default, and `fixed` overrides."""
    given = {name: getattr(args, dest) for name, dest in _RANK_OPTION_DESTS.items() if getattr(args, dest, None)}
    return RankOptions.of(**{**given, **fixed}, plugin_options=_plugin_options(args))


def _cmd_accesses(args) -> int:
    from .rank import harvest

    spec, domain = _load(args)
    print(harvest(spec.kernel, domain_shape=domain, align=args.align).summary())
    return 0


def _progress(items):
    """A progress bar on a terminal's stderr (0 of N at once, then the rate and time left), nothing otherwise (a
    log or a pipe); it disappears when the work is done. `rank` passes its candidates through it, so each
    candidate's estimate and prediction (seconds each with ``--model tracesim``) advances it."""
    from tqdm import tqdm

    return tqdm(items, disable=not sys.stderr.isatty(), leave=False, unit="candidate", file=sys.stderr)


def _ranking_table(ranking, head: int | None) -> str:
    """The ranking's table; `head` limits the rejected candidates too (the table's last lines), and the table
    says how many more; its first line still counts them all."""
    table = ranking.table(head=head)
    if head is None or len(ranking.rejected) <= head:
        return table
    lines = table.splitlines()[: -(len(ranking.rejected) - head)]
    return "\n".join([*lines, f"  ... {len(ranking.rejected) - head} more rejected"])


def _best_line(best, kernel, args, domain) -> str:
    """What to do with the pick: for pystencils assignments or kernels the `pystencils_perf.create_kernel` call
    that generates the SPEC's kernel with its launch, for any other kernel (a CUDA description, loopy) the
    launch itself."""
    from .adapters.pystencils.apply import is_pystencils_kernel

    if is_pystencils_kernel(kernel):
        return _create_kernel_call(best, args, domain)
    block, fold = "x".join(map(str, best.launch.block)), "x".join(map(str, best.launch.fold))
    return f"blocks of {block} threads" + (f", each thread updating {fold} points" if fold != "1x1x1" else "")


def _create_kernel_call(best, args, domain) -> str:
    """The `pystencils_perf.create_kernel` call that generates the SPEC's kernel with `best`'s launch."""
    options = [f"device={args.device!r}", f"blocks=[{tuple(best.launch.block)}]", f"folds=[{tuple(best.launch.fold)}]"]
    if args.align != "base":
        options.append(f"align={args.align!r}")
    if domain is not None:
        options.append(f"domain_shape={tuple(domain)}")
    return f"pystencils_perf.create_kernel(assignments, {', '.join(options)})"


def _cmd_rank(args) -> int:
    from .rank import rank

    _check_threads(args)
    spec, domain = _load(args)
    if args.backend == "isl":
        from .estimate.footprint_isl import COST_NOTE

        print(COST_NOTE, file=sys.stderr)
    ranking = rank(
        spec.kernel,
        args.device,
        options=_rank_options(args),
        layout=Layout(domain, args.align),
        progress=_progress,
        jobs=args.jobs,
    )
    print(_ranking_table(ranking, args.head))
    print(f"best: {_best_line(ranking.pick, spec.kernel, args, domain)}")  # what rank asked the plugins
    if args.json:
        ranking.write_json(args.json)
    if args.csv:
        write_text(args.csv, ranking.to_csv())
    return 0


def _plugin_options(args) -> dict:
    """The values of the options plugins added to `rank` (`perf_addoption`), by dest."""
    return {dest: getattr(args, dest) for dest in getattr(args, "plugin_dests", ())}


def _names(kind: str, offered: list[dict]):
    """An argparse type for a comma list of names the installed plugins offer."""
    from .rank import check_names

    def names(text: str) -> tuple[str, ...]:
        asked = tuple(n.strip() for n in text.split(",") if n.strip())
        if not asked:
            raise ConfigurationError(f"no {kind} given")
        check_names(kind, asked, offered)
        return asked

    return names


def _one_name(kind: str, offered: list[dict]):
    """An argparse type for one name the installed plugins offer (a second one would be ignored)."""
    names = _names(kind, offered)

    def one_name(text: str) -> str:
        asked = names(text)
        if len(asked) > 1:
            raise ConfigurationError(f"give one {kind}, not {len(asked)} ({', '.join(asked)})")
        return asked[0]

    return one_name


def _add_plugin_options(p, pm) -> tuple[str, ...]:
    """Let plugins add options to `p`; the dests they added."""
    before = {a.dest for a in p._actions}
    pm.hook.perf_addoption(parser=p)
    return tuple(a.dest for a in p._actions if a.dest not in before)


def _x_joined(values) -> str:
    return "x".join(map(str, values))


def _ncu_child_argv(args) -> list[str]:
    """This very command, as the child that Nsight Compute profiles."""
    argv = [
        sys.executable,
        "-m",
        "pystencils_perf.cli",
        "measure",
        args.spec,
        "--device",
        args.device,
        "--out",
        os.devnull,
        "--ncu-pass",
        "--align",
        args.align,
        "--fold",
        ",".join(map(_x_joined, args.fold)),
    ]
    if args.domain:
        argv += ["--domain", _x_joined(args.domain)]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if args.blocks:
        argv += ["--blocks", ",".join(map(_x_joined, args.blocks))]
    return argv


def _cmd_measure(args) -> int:
    from .devices import get_device
    from .adapters.pystencils.measure import launch_each_once, measure
    from .measure.dataset import write_dataset
    from .adapters.pystencils.gpu import require_cupy
    from .measure.ncu import profile

    _check_threads(args)
    require_cupy()  # one clear line and exit 2 on a machine without cupy or a GPU
    spec, domain = _load(args)
    options, layout = _rank_options(args), Layout(domain, args.align)
    if args.ncu_pass:
        launch_each_once(spec.kernel, args.device, options, layout=layout)
        return 0
    run = measure(
        spec.kernel, args.device, options, layout=layout, warmup=args.warmup, repeats=args.repeats, progress=_progress
    )
    rows = run.rows
    if args.ncu:
        counters = profile(
            _ncu_child_argv(args),
            run.launches,
            run.kernel_names,
            run.lattice_updates,
            get_device(args.device).l2_sector_bytes,
            ncu=args.ncu_path,
        )
        rows = [replace(r, values={**r.values, **counters[r.launch]}) for r in rows]
    write_dataset(args.out, rows)
    print(f"{len(rows)} candidates measured on {rows[0].run['device']}, written to {args.out}")
    print(f"{'block':>12} {'fold':>7} {'time ms':>9} {'GLup/s':>7}")
    for row in sorted(rows, key=lambda r: -r.values["glups"]):
        print(
            f"{'x'.join(map(str, row.launch.block)):>12} {'x'.join(map(str, row.launch.fold)):>7} "
            f"{float(row.run['time_ms']):>9.4f} {row.values['glups']:>7.2f}"
        )
    return 0


def _warn(lines) -> None:
    """One line each on stderr, where it does not mix with the tables on stdout."""
    for line in lines:
        print(f"pystencils-perf: warning: {line}", file=sys.stderr)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """`warnings.showwarning`: pystencils-perf's own warnings (`PerfWarning`) one line each, as `_warn` prints."""
    if issubclass(category, PerfWarning):
        _warn([str(message)])
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


def _validation_inputs(args):
    from .measure.dataset import read_dataset

    dataset = read_dataset(args.data)
    spec, domain = _load(args)
    return (
        dataset,
        spec,
        dict(options=_rank_options(args), layout=Layout(domain, args.align), progress=_progress, jobs=args.jobs),
    )


def _validate_kernel_tuner(args):
    """Kernel Tuner data (cache JSON, .json.gz, or a CSV with block_size_x): the SPEC describes each variant."""
    from .measure.kernel_tuner import load_tunable_spec, read_kernel_tuner
    from .validate import validate_tuned

    if args.domain or args.align != "base":
        raise ConfigurationError(
            "--domain and --align do not apply to Kernel Tuner data: its SPEC's kernel_for describes sizes"
        )
    return validate_tuned(
        read_kernel_tuner(args.data),
        load_tunable_spec(args.spec),
        args.device,
        options=_rank_options(args),
        progress=_progress,
        jobs=args.jobs,
    )


def _cmd_validate(args) -> int:
    from .measure.kernel_tuner import is_kernel_tuner_file
    from .validate import validate, write_report

    if is_kernel_tuner_file(args.data):
        result = _validate_kernel_tuner(args)
    else:
        dataset, spec, options = _validation_inputs(args)
        result = validate(dataset, spec.kernel, args.device, **options)
    _warn(result.warnings)
    print(result.table())
    if args.out:
        report = write_report(result, args.out, command=shlex.join(["pystencils-perf", *sys.argv[1:]]))
        if report.note:
            print(report.note)
        print(f"report: {report.path}" + (f" ({len(report.plots)} plots)" if report.plots else ""))
    return 0


def _cmd_calibrate(args) -> int:
    from .devices import get_device, load_device_file
    from .estimate.capacity import calibrate, refuse_library_path, write_device_file
    from .measure.kernel_tuner import is_kernel_tuner_file
    from .validate import validate

    if is_kernel_tuner_file(args.data):  # else it is read as a data set: "not CSV text", "lacks the columns"
        raise ConfigurationError(
            f"calibrate needs a CSV of measured volumes (bx,by,bz,fx,fy,fz,meas_...), and "
            f"{args.data} is Kernel Tuner data, which validate and tune --replay read"
        )
    dataset, spec, options = _validation_inputs(args)
    device = get_device(args.device)
    out = Path(args.out or f"{Path(device.path).stem}-calibrated.toml")
    refuse_library_path(out)  # before the validation's minutes
    before = validate(dataset, spec.kernel, device, **options)
    _warn(before.warnings)
    points = [(p.measured.values, p.candidate.metrics) for p in before.pairs]
    result = calibrate(points, device.curves, unified_l2=device.unified_l2)
    provenance = {
        "data": args.data,
        "points_in_data": len(dataset.rows),
        "spec": args.spec,
        "align": args.align,
        "date": date.today().isoformat(),
        "base_device_file": Path(device.path).name,
    }
    write_device_file(device, result, out, provenance)
    after = validate(dataset, spec.kernel, load_device_file(out), **options)
    print(result.table())
    print(f"wrote {out}")
    print(f"{'metric':<19} {'MAPE % before':>13} {'after':>7}")
    for b, a in zip(before.errors, after.errors):
        print(f"{b.metric.label:<19} {b.mape_percent:>13.2f} {a.mape_percent:>7.2f}")
    return 0


def _replayed(args):
    """Candidates and measurements of a Kernel Tuner cache, described by a `kernel_for` SPEC."""
    from .measure.dataset import other_gpu
    from .measure.kernel_tuner import load_tunable_spec, read_kernel_tuner
    from .tune.replay import CompileBeforeMeasuring, ReplaySource, replay_candidates, spec_kernel_key
    from .tune.tuner import FirstMeasurement

    if args.domain or args.align != "base" or args.threads or args.blocks or args.fold:
        raise ConfigurationError(
            "--domain, --align, --threads, --blocks and --fold do not apply to --replay: "
            "the cache's configurations are the candidates"
        )
    spec, data = load_tunable_spec(args.spec), read_kernel_tuner(args.replay)
    source = ReplaySource(data, args.device)
    _warn(other_gpu(Path(args.replay).name, {data.device_name} - {""}, source.device))
    # a launch left uncompiled is compiled before it is measured: one its code cannot run never is
    admit = CompileBeforeMeasuring(spec, args.device, model=args.model, backend=args.backend, source=args.replay)
    first = FirstMeasurement(source, admit)  # a space that ranks for long is measured once meanwhile
    space = replay_candidates(
        data,
        spec,
        args.device,
        model=args.model,
        backend=args.backend,
        progress=_progress,
        jobs=args.jobs,
        executor=args.executor,
        meanwhile=first,
        compile_until_certain=None if args.compile_all else COMPILED_HEAD,
    )
    kernel = spec_kernel_key(spec, space.candidates)
    title = (
        f"{Path(args.spec).stem} on {data.device_name or args.device}, replayed from {Path(args.replay).name}: "
        f"{len(space.candidates)} candidates, {len(space.rejected)} rejected for {args.device}"
        + (f"; {space.not_compiled} not compiled (--compile-all compiles them)" if space.not_compiled else "")
    )
    return title, space.candidates, source, kernel, first.measured, admit


def _cmd_tune(args) -> int:
    from .tune.record import RecordStore
    from .tune.tuner import tune

    store = RecordStore()
    store.check_writable()  # before minutes of ranking
    if args.replay:
        title, candidates, source, kernel, measured, admit = _replayed(args)
        result = tune(
            candidates, source, budget=args.budget, kernel=kernel, store=store, measured_before=measured, admit=admit
        )
    else:
        from .adapters.pystencils.gpu import require_cupy, runnable
        from .adapters.pystencils.tuning import tune_on_gpu
        from .rank import rank

        _check_threads(args)
        # before anything slow: fail in a second on machines without a GPU
        require_cupy("tune", "; without a GPU, tune SPEC --replay CACHE.json[.gz] replays a Kernel Tuner cache")
        spec, domain = _load(args)
        kernel, recipe = runnable(spec.kernel)
        # a generated kernel has its folding: only assignments can be folded
        unfolded = {"folds": [(1, 1, 1)]} if recipe is None and not args.fold else {}
        layout = Layout(domain, args.align)
        ranking = rank(
            spec.kernel,
            args.device,
            options=_rank_options(args, **unfolded),
            layout=layout,
            progress=_progress,
            jobs=args.jobs,
        )
        title = f"{ranking.kernel} on {args.device} (this machine's GPU): {len(ranking.candidates)} candidates"
        result = tune_on_gpu(kernel, recipe, ranking, budget=args.budget, layout=layout, store=store)
    print(title)
    print(result.table())
    if result.record_path:
        print(f"record: {result.record_path}")
    if args.json:
        with replacing_file(args.json) as fh:
            json.dump(
                {
                    "title": title,
                    "candidates": len(result.candidates),
                    "measured_now": result.measured_now,
                    "rejected_once_compiled": [
                        {"params": candidate.params, "reason": reason} for candidate, reason in result.rejected
                    ],
                    **result.record.as_json(),
                },
                fh,
                indent=1,
            )
    return 0


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The parser of every subcommand, with the models, filters, backends and options of the installed plugins.

    `lazy` adds a subcommand's arguments only when that subcommand is parsed or its help printed (`main`), so
    that ``--help`` and ``devices`` start without loading the plugins, and sympy, numpy and islpy with them.
    """
    parser = _Parser(prog="pystencils-perf", description="Predict and rank GPU launch configurations.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    parser.add_argument(
        "--block-plugin",
        action="append",
        metavar="NAME",
        help="do not load the plugin of this entry-point name (repeatable; see `plugins`)",
    )

    @functools.cache
    def plugins():
        from .plugins import get_plugin_manager

        return get_plugin_manager()

    @functools.cache
    def backends() -> tuple[str, ...]:
        from .estimate.plugin import footprint_backends

        return tuple(footprint_backends())

    def devices_args(p):
        from .devices.report import add_arguments as add_device_arguments

        add_device_arguments(p)
        p.set_defaults(run=_cmd_devices)

    def plugins_args(p):
        p.set_defaults(run=_cmd_plugins)

    def layout_args(p):
        p.add_argument(
            "--domain", type=_argument_type(parse_domain), help="array shape of variable-size fields, e.g. 64x64x64"
        )
        p.add_argument("--align", choices=("base", "interior"), default="base", help="field alignment (default base)")

    def spec_args(p):
        p.add_argument("spec", help="Python file defining `kernel` or `assignments`")
        layout_args(p)

    def candidate_args(p, default_folds):
        p.add_argument("--device", required=True, help="device name, alias or .toml file")
        p.add_argument(
            "--threads", type=_argument_type(_positive_int), help="threads per block (default 1024 stencils, 512 LBM)"
        )
        p.add_argument(
            "--blocks", type=_argument_type(_triples("block")), help="explicit block sizes, e.g. 32x2x16,16x4x16"
        )
        p.add_argument(
            "--fold",
            type=_argument_type(_triples("fold")),
            default=default_folds,
            help=f"thread foldings, e.g. 1x1x1,1x1x2 (default {default_folds or '1x1x1,1x2x1,1x1x2'})",
        )

    def model_arg(p):
        p.add_argument(
            "--model",
            default=DEFAULT_MODEL,
            type=_argument_type(_one_name("performance model", plugins().hook.perf_models())),
            help=f"performance model (default {DEFAULT_MODEL}; `plugins` lists the installed ones)",
        )

    def jobs_arg(p):
        p.add_argument(
            "--jobs",
            type=_argument_type(_int_at_least(0)),
            default=0,
            help="worker processes that rank the candidates (default 0: every core; 1: none)",
        )

    def data_args(p, kernel_tuner: bool):
        tuner = (
            ", or a Kernel Tuner cache (.json, .json.gz) or CSV with block_size_x,... and a time column"
            if kernel_tuner
            else ""
        )
        p.add_argument(
            "data", type=_argument_type(_input_path), help=f"measured data set (CSV: bx,by,bz,fx,fy,fz,meas_...){tuner}"
        )
        p.add_argument("--device", required=True, help="device name, alias or .toml file")
        tuned = "; for Kernel Tuner data `kernel_for(params)` and `lattice_updates`" if kernel_tuner else ""
        p.add_argument(
            "--spec", required=True, help=f"SPEC of the measured kernel (Python file defining `kernel`{tuned})"
        )
        p.add_argument("--backend", default="auto", choices=backends(), help="footprint backend")
        layout_args(p)

    def params_arg(p):
        p.add_argument(
            "--params",
            type=_argument_type(_parameters),
            help="for a SPEC of Kernel Tuner data (`kernel_for(params)`): the kernel of these tunable parameters, "
            "e.g. tile_size_x=2,tile_size_y=4 (the SPEC's fixed_parameters are added)",
        )

    def accesses_args(p):
        spec_args(p)
        params_arg(p)
        p.set_defaults(run=_cmd_accesses)

    def rank_args(p):
        spec_args(p)
        params_arg(p)
        candidate_args(p, None)
        p.add_argument("--backend", default="auto", choices=backends(), help="footprint backend (default auto)")
        model_arg(p)
        p.add_argument(
            "--prune",
            type=_argument_type(_names("candidate filter", plugins().hook.perf_prune_filters())),
            help="candidate filters to apply, comma-separated (e.g. ryoo)",
        )
        p.add_argument("--json", type=_argument_type(_output_file), help="write the ranking as JSON")
        p.add_argument("--csv", type=_argument_type(_output_file), help="write the ranking as CSV")
        p.add_argument(
            "--head", type=_argument_type(_positive_int), help="print only the best N candidates and N rejected"
        )
        jobs_arg(p)
        p.set_defaults(run=_cmd_rank, plugin_dests=_add_plugin_options(p, plugins()))

    def measure_args(p):
        from .adapters.pystencils.measure import DEFAULT_WARMUP, MIN_REPEATS

        spec_args(p)
        candidate_args(p, "1x1x1")
        p.add_argument("--out", required=True, type=_argument_type(_output_file), help="data set to write (CSV)")
        p.add_argument(
            "--repeats",
            type=_argument_type(_int_at_least(MIN_REPEATS)),
            default=MIN_REPEATS,
            help=f"timed runs per candidate, median reported (at least {MIN_REPEATS})",
        )
        p.add_argument(
            "--warmup",
            type=_argument_type(_int_at_least(0)),
            default=DEFAULT_WARMUP,
            help=f"untimed runs per candidate first (default {DEFAULT_WARMUP})",
        )
        p.add_argument("--ncu", action="store_true", help="also collect Nsight Compute volume counters")
        p.add_argument("--ncu-path", default="ncu", help="the ncu executable (default: ncu on PATH)")
        p.add_argument("--ncu-pass", action="store_true", help=argparse.SUPPRESS)
        p.set_defaults(run=_cmd_measure)

    def validate_args(p):
        data_args(p, kernel_tuner=True)
        model_arg(p)
        p.add_argument("--out", type=_argument_type(_output_folder), help="folder for report.md and the plots")
        jobs_arg(p)
        p.set_defaults(run=_cmd_validate)

    def calibrate_args(p):
        data_args(p, kernel_tuner=False)
        p.add_argument(
            "--out",
            type=_argument_type(_output_file),
            help="device file to write (default DEVICE-calibrated.toml here)",
        )
        jobs_arg(p)
        p.set_defaults(run=_cmd_calibrate)

    def tune_args(p):
        p.add_argument(
            "spec",
            help="SPEC: `kernel` or `assignments`; with --replay, `kernel_for(params)` and "
            "`lattice_updates` as for validate",
        )
        layout_args(p)
        candidate_args(p, None)
        p.add_argument(
            "--budget",
            type=_argument_type(_positive_int),
            default=10,
            help="measure at most this many candidates (default 10), counting an earlier call's record",
        )
        p.add_argument(
            "--replay",
            type=_argument_type(_existing_file),
            help="Kernel Tuner cache (.json, .json.gz) to take the measurements from instead of a GPU",
        )
        p.add_argument("--backend", default="auto", choices=backends(), help="footprint backend (default auto)")
        p.add_argument(
            "--model",
            default=DEFAULT_MODEL,
            type=_argument_type(_one_name("performance model", plugins().hook.perf_models())),
            help=f"performance model whose order the search starts from (default {DEFAULT_MODEL})",
        )
        p.add_argument("--json", type=_argument_type(_output_file), help="write the measurements and the best as JSON")
        jobs_arg(p)
        p.add_argument(
            "--executor",
            choices=EXECUTORS,
            default="processes",
            help="with --replay: rank the SPEC's variants in worker processes (default) or on the Ray "
            "cluster that RAY_ADDRESS names (else a local one)",
        )
        p.add_argument(
            "--compile-all",
            action="store_true",
            help=f"with --replay, where the SPEC's kernels compile per launch (`block_size_names`): compile every "
            f"launch, not only those that can be among the {COMPILED_HEAD} fastest",
        )
        p.set_defaults(run=_cmd_tune)

    subcommands = [
        (
            "devices",
            "list the device library, print a device file (NAME), or write a template (--template [FILE])",
            devices_args,
        ),
        ("plugins", "list the installed plugins, their models, filters and backends", plugins_args),
        ("accesses", "print every harvested access and the launch configuration", accesses_args),
        ("rank", "rank block sizes and thread foldings", rank_args),
        ("measure", "time every candidate on this machine's GPU (cupy), optionally with ncu counters", measure_args),
        ("validate", "compare predictions with a measured data set; report and plots", validate_args),
        ("calibrate", "fit the capacity-miss curves to a measured data set; write a device file", calibrate_args),
        (
            "tune",
            "measure the model's best candidates on this machine's GPU (or replay a Kernel Tuner cache), "
            "learning from each; keep the result on disk",
            tune_args,
        ),
    ]
    for name, help, add_arguments in subcommands:
        p = sub.add_parser(name, help=help)
        if lazy:
            p.add_arguments_later(add_arguments)
        else:
            add_arguments(p)
    return parser


#: the options that name files a command reads, and those it writes
_INPUT_OPTIONS = ("spec", "data", "device", "replay")
_OUTPUT_OPTIONS = ("json", "csv", "out")
_ROLES = {"spec": "the SPEC", "data": "the data set", "device": "the device file", "replay": "the replayed cache"}


def _refuse_shared_outputs(args) -> None:
    """Refuse an output path given twice (the later write would replace the earlier) or that names an input
    (a special file such as /dev/stdout may take several outputs)."""
    seen: dict[Path, str] = {}
    for option in (*_INPUT_OPTIONS, *_OUTPUT_OPTIONS):
        value = getattr(args, option, None)
        if not value or is_special(Path(value)) or not (option in _OUTPUT_OPTIONS or Path(value).is_file()):
            continue
        path = Path(value).resolve()
        if option in _INPUT_OPTIONS:  # an input read twice replaces nothing: it fails, if at all, as what it is
            seen.setdefault(path, option)
            continue
        if path in seen and seen[path] in _INPUT_OPTIONS:
            raise ConfigurationError(f"--{option} {value} is {_ROLES[seen[path]]}: writing it would replace an input")
        if path in seen:
            raise ConfigurationError(
                f"--{option} {value} is also --{seen[path]}'s file: give each output a path of its own"
            )
        seen[path] = option


def _check_pystencils_cache() -> None:
    """Refuse a ``PYSTENCILS_CACHE_DIR`` that cannot be created, which pystencils would fail on deep inside the
    SPEC's import of it."""
    from .tempcache import CACHE_ENV

    folder = os.environ[CACHE_ENV]
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise ConfigurationError(
            f"{CACHE_ENV}={folder}: cannot create pystencils' cache folder ({e.strerror or e})"
        ) from None


def _block_plugins(argv: list[str]) -> None:
    """Apply ``--block-plugin NAME`` before the plugin manager is built (the parser asks it for choices)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--block-plugin", action="append", default=[])
    names = early.parse_known_args(argv)[0].block_plugin
    if names:
        from .plugins import BLOCK_ENV, check_block_names

        check_block_names(names)
        current = [n for n in os.environ.get(BLOCK_ENV, "").split(",") if n]
        os.environ[BLOCK_ENV] = ",".join(current + names)


def main(argv=None) -> int:
    # before any plugin imports pystencils, which creates its cache (~/.cache/pystencils unless told otherwise)
    use_temporary_pystencils_cache()
    argv = _attach_dash_values(sys.argv[1:] if argv is None else list(argv))
    try:
        _check_pystencils_cache()
        _block_plugins(argv)
        args = build_parser(lazy=True).parse_args(argv)
        _refuse_shared_outputs(args)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = args.run(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return status
    except PerfError as e:
        print(f"pystencils-perf: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # outputs are written whole or not at all (`outputs`): nothing to clean up
        print("pystencils-perf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `| head` stopped reading: end quietly, as Unix tools do on SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit would raise again
        return 141


if __name__ == "__main__":
    sys.exit(main())
