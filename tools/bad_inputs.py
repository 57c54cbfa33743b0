"""Run some 280 bad inputs through pystencils-perf and say how each one ends (issue 58, "What must be shown").

Every input a user can get wrong is tried here: each subcommand's options with bad values, paths that name
no readable file or no writable place, malformed SPEC, device, data and Kernel Tuner files, tunable SPECs, and
calls of the Python API with wrong arguments. The inputs are built in a temporary folder (removed at the end);
each command-line case runs `pystencils_perf.cli.main` in a subprocess, each API case a small Python snippet,
both from the repository root with PYSTENCILS_CACHE_DIR and PYSTENCILS_PERF_TUNING_DIR inside that folder.
Each case names a keyword that its message must contain (case ignored; ``a|b``: either), the outputs it must
not leave behind, and the files it must not change (a changed one is put back, the device library's among them).

    python3 tools/bad_inputs.py [--jobs N] [--only SUBSTRING] [--list]

--jobs runs that many cases at once (default 2), --only runs the cases whose id contains SUBSTRING, --list
prints the cases without running them. The script prints one row per case, those that are not clean first,
then a summary; it exits with 1 where fewer than 95 % of the cases that ran are clean, else 0.

How a case ends (`classify`):

- clean: exit status 2 and one error line on stderr (``pystencils-perf: error: ...``; for an API snippet
  ``ERROR: <type>: <message>``, printed where the package raised a `PerfError`, or a TypeError or ValueError
  with a message from a ``raise`` of its own), after nothing but warning lines, naming the case's keyword,
  with none of the case's outputs left behind and the files it must not touch unchanged;
- warned: exit status 0 with a warning line (``pystencils-perf: warning: ...``; for an API snippet
  ``WARNED: <message>``, a `PerfWarning`) naming the keyword; clean where the case expects a warning
  (the input is usable, the result right, the problem named), not clean where it expects an error;
- traceback: a ``Traceback (most recent call last)`` on stderr;
- silent: exit status 0 without a warning;
- unclear: anything else (several lines, another exit status, a leftover output, a changed file, a timeout,
  a clean line or a warning that does not name the keyword);
- skipped: the case cannot be made here (a file without read permission, for root).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_PROGRAM = "import sys; from pystencils_perf.cli import main; sys.exit(main(sys.argv[1:]))"
TIMEOUT_S = 120
CLEAN_SHARE = 0.95
TRACEBACK = "Traceback (most recent call last)"
#: the error and warning prefixes of the command line and of the API snippets
PREFIXES = {"cli": ("pystencils-perf: error: ", "pystencils-perf: warning: "), "api": ("ERROR: ", "WARNED: ")}
#: outcomes in the order the table shows them
OUTCOMES = ("traceback", "silent", "unclear", "warned", "clean", "skipped")

V100_DATA = ROOT / "validation/data/v100/v100_star3d_r2_1024_folding.csv"
V100_SPEC = ROOT / "validation/data/v100/star3d_r2.py"
V100_DEVICE = ROOT / "pystencils_perf/devices/data/v100-pcie-32gb.toml"
A4000_CACHE = ROOT / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
HUGE = str(2**70)

JACOBI = """\
import pystencils as ps
src, dst = ps.fields("src, dst: double[66, 66]")
assignments = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
"""
VARIABLE_SIZE = """\
import pystencils as ps
src, dst = ps.fields("src, dst: double[2D]")
assignments = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0]) / 2)]
"""
TUNABLE = """\
from pystencils_perf.catalog import jacobi_2d

lattice_updates = 64 * 64
fixed_parameters = {"filter": 5}

def kernel_for(params):
    return jacobi_2d((66, 66))
"""
API_PRELUDE = JACOBI.replace("assignments =", "asg =")

#: runs an API case's body; prints its PerfWarnings, then its error as one line and exits with 2
API_WRAPPER = '''\
import linecache, sys, warnings
import pystencils_perf as pp
from pystencils_perf.errors import PerfWarning


def raised_by_the_package(error):
    """A TypeError or ValueError that a `raise` in pystencils-perf (or a plugin of it) raised."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
    return tb.tb_frame.f_globals.get("__name__", "").startswith("pystencils_perf") and line.startswith("raise")


error = None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
{prelude}
    try:
{body}
    except pp.PerfError as e:
        error = e
    except (TypeError, ValueError) as e:
        if not (str(e) and raised_by_the_package(e)):
            raise
        error = e
for w in caught:
    if issubclass(w.category, PerfWarning):
        print(f"WARNED: {{w.message}}", file=sys.stderr)
if error is not None:
    print(f"ERROR: {{type(error).__name__}}: {{error}}", file=sys.stderr)
    sys.exit(2)
'''


@dataclass(frozen=True)
class Case:
    """One bad input: what to run, what its message must name, and what must not be left behind."""

    id: str
    kind: str  # "cli" or "api"
    argv: tuple[str, ...]  # the command line's arguments, or the API snippet's program
    keyword: str  # what the error line or warning must name (case ignored; "a|b": either)
    expect: str = "error"  # "error", or "warning" where a warning is the right answer
    outputs: tuple[Path, ...] = ()  # files that must not exist afterwards
    unchanged: tuple[Path, ...] = ()  # files that must keep their bytes
    skip: str = ""  # why the case cannot be made here


@dataclass(frozen=True)
class Outcome:
    """How a case ended (`classify`)."""

    case: Case
    outcome: str
    clean: bool
    message: str  # the error line, a traceback's last line, or the first line of stderr


@dataclass
class Inputs:
    """The valid files the cases start from, in the temporary folder `tmp`; `new` names a fresh path there."""

    tmp: Path
    jacobi: Path = field(init=False)
    variable: Path = field(init=False)
    tunable: Path = field(init=False)
    cache: Path = field(init=False)
    data: Path = field(init=False)
    _count: int = 0

    def __post_init__(self) -> None:
        self.jacobi = self.write("jacobi.py", JACOBI)
        self.variable = self.write("variable.py", VARIABLE_SIZE)
        self.tunable = self.write("tunable.py", TUNABLE)
        self.cache = self.write("cache.json", json.dumps(kernel_tuner_cache(cache_entries())))
        self.data = self.write("v100.csv", "\n".join(V100_DATA.read_text().splitlines()[:4]) + "\n")

    def new(self, name: str) -> Path:
        """A path in its own new folder, so that no two cases share an output."""
        self._count += 1
        folder = self.tmp / f"case{self._count}"
        folder.mkdir()
        return folder / name

    def write(self, name: str, content: str | bytes) -> Path:
        path = self.tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path


def cli(
    case_id: str, *argv: object, keyword: str, expect: str = "error", outputs=(), unchanged=(), skip: str = ""
) -> Case:
    return Case(case_id, "cli", tuple(map(str, argv)), keyword, expect, tuple(outputs), tuple(unchanged), skip)


def api(case_id: str, body: str, *, keyword: str, expect: str = "error", prelude: bool = True) -> Case:
    """A snippet run inside `API_WRAPPER`; `prelude` defines `asg`, 2D Jacobi assignments on 66 x 66 doubles."""
    program = API_WRAPPER.format(
        prelude=textwrap.indent(API_PRELUDE if prelude else "pass", "    "), body=textwrap.indent(body, "        ")
    )
    return Case(case_id, "api", (program,), keyword, expect)


# -- the valid inputs' builders ------------------------------------------------------------------------------------


def cache_entries() -> list[dict]:
    """Twelve configurations of the tunable SPEC with made-up times (test input, not measurements)."""
    return [
        {"block_size_x": bx, "block_size_y": by, "filter": 5, "time": 1.0 + bx / 100 + by / 10}
        for bx in (8, 16, 32, 64)
        for by in (1, 2, 4)
    ]


def kernel_tuner_cache(entries: list, device_name: str = "Tesla V100-PCIE-32GB") -> dict:
    """A cache of the tunable SPEC's 64 x 64 updates, measured on `device_name`."""
    return {
        "device_name": device_name,
        "problem_size": [64, 64],
        "cache": {str(i): entry for i, entry in enumerate(entries)},
    }


def v100_csv(rows: list[str], header: str | None = None) -> str:
    """A data set with the V100 data's header (or `header`) and `rows`."""
    first = V100_DATA.read_text().splitlines()[0] if header is None else header
    return "\n".join([first, *rows]) + "\n"


def without_key(text: str, key: str) -> str:
    """A device file's text without its top-level `key` (a ``key = ...`` line or a ``[key]`` table)."""
    table = re.compile(rf"^\[{re.escape(key)}\]\n(?:(?!\[).*\n)*", re.M)
    line = re.compile(rf"^{re.escape(key)} = .*\n", re.M)
    return table.sub("", text) if table.search(text) else line.sub("", text)


def with_value(text: str, key: str, value: str) -> str:
    """A device file's text with the value of `key` (a top-level line, or the ``value`` of its table) replaced."""
    table = re.compile(rf"^(\[{re.escape(key)}\]\nvalue = ).*$", re.M)
    line = re.compile(rf"^({re.escape(key)} = ).*$", re.M)
    pattern = table if table.search(text) else line
    assert pattern.search(text), key
    return pattern.sub(lambda m: m.group(1) + value, text, count=1)


# -- the cases -------------------------------------------------------------------------------------------------


def base_commands(f: Inputs) -> dict[str, list[object]]:
    """A valid call of each subcommand that takes numbers, to which a case adds one bad option."""
    return {
        "rank": ["rank", f.jacobi, "--device", "V100"],
        "measure": ["measure", f.jacobi, "--device", "H100", "--out", f.new("m.csv")],
        "validate": ["validate", f.data, "--device", "V100", "--spec", V100_SPEC, "--align", "interior"],
        "calibrate": [
            "calibrate",
            f.data,
            "--device",
            "V100",
            "--spec",
            V100_SPEC,
            "--align",
            "interior",
            "--out",
            f.new("c.toml"),
        ],
        "tune": ["tune", f.tunable, "--device", "V100", "--replay", f.cache],
    }


def number_option_cases(f: Inputs) -> list[Case]:
    """Whole-number options with empty, negative, zero, huge, non-numeric and fractional values."""
    options = [
        ("rank", "--threads", ["", "0", "-1", "abc", "2.5", HUGE, "2048"]),
        ("rank", "--head", ["0", "-3", "three"]),
        ("rank", "--jobs", ["-1", "abc"]),
        ("measure", "--threads", ["0"]),
        ("measure", "--repeats", ["2", "abc"]),
        ("validate", "--jobs", ["-1"]),
        ("calibrate", "--jobs", ["abc"]),
        ("tune", "--budget", ["", "0", "-1", "abc", "2.5"]),
        ("tune", "--threads", [HUGE]),
        ("tune", "--jobs", ["-1"]),
    ]
    cases = []
    for command, option, values in options:
        for value in values:
            base = base_commands(f)[command]
            outputs = [a for a in base if isinstance(a, Path) and not a.exists()]
            label = "huge" if value == HUGE else value or "empty"
            cases.append(cli(f"{command}{option}={label}", *base, option, value, keyword=option, outputs=outputs))
    return cases


BAD_TRIPLES = ["", "32x32", "0x1x1", "-32x1x1", "axbxc", "1e3x1x1", "32x1x1x1"]
BAD_DOMAINS = ["", "0x64", "axb", f"{HUGE}x64", "64x64x64x64", "-64x64"]


def triple_option_cases(f: Inputs) -> list[Case]:
    """--blocks, --fold and --domain in wrong forms."""
    out = f.new("m.csv")
    cases = [
        cli(f"rank--blocks={v or 'empty'}", "rank", f.jacobi, "--device", "V100", "--blocks", v, keyword="--blocks")
        for v in BAD_TRIPLES
    ]
    cases += [
        cli(f"rank--fold={v}", "rank", f.jacobi, "--device", "V100", "--fold", v, keyword="--fold")
        for v in ("32x32", "0x1x1", "axbxc")
    ]
    cases += [
        cli(
            "measure--blocks=axbxc",
            "measure",
            f.jacobi,
            "--device",
            "H100",
            "--out",
            out,
            "--blocks",
            "axbxc",
            keyword="--blocks",
            outputs=[out],
        ),
        cli(
            "tune--fold=32x32",
            "tune",
            f.tunable,
            "--device",
            "V100",
            "--replay",
            f.cache,
            "--fold",
            "32x32",
            keyword="--fold",
        ),
        cli("accesses--domain=0x64", "accesses", f.variable, "--domain", "0x64", keyword="--domain"),
    ]
    cases += [
        cli(
            f"rank--domain={'huge' if HUGE in v else v or 'empty'}",
            "rank",
            f.variable,
            "--device",
            "V100",
            "--domain",
            v,
            keyword="--domain",
        )
        for v in BAD_DOMAINS
    ]
    return cases


def name_option_cases(f: Inputs) -> list[Case]:
    """Unknown or empty names of models, backends, filters, alignments, executors and plugins."""
    rank = ["rank", f.jacobi, "--device", "V100"]
    validate = ["validate", f.data, "--device", "V100", "--spec", V100_SPEC]
    tune = ["tune", f.tunable, "--device", "V100", "--replay", f.cache]
    return [
        cli("rank--model=nosuch", *rank, "--model", "nosuch", keyword="nosuch"),
        cli("rank--model=empty", *rank, "--model", "", keyword="--model"),
        cli("rank--model=two", *rank, "--model", "limiters,throughput", keyword="--model"),
        cli("rank--backend=gpu", *rank, "--backend", "gpu", keyword="gpu"),
        cli("rank--align=middle", *rank, "--align", "middle", keyword="middle"),
        cli("rank--prune=nosuch", *rank, "--prune", "nosuch", keyword="nosuch"),
        cli("accesses--align=empty", "accesses", f.jacobi, "--align", "", keyword="--align"),
        cli("validate--model=nosuch", *validate, "--model", "nosuch", keyword="nosuch"),
        cli("validate--backend=gpu", *validate, "--backend", "gpu", keyword="gpu"),
        cli("tune--model=empty", *tune, "--model", "", keyword="--model"),
        cli("tune--executor=threads", *tune, "--executor", "threads", keyword="threads"),
        cli("--block-plugin=nosuch", "--block-plugin", "nosuch", *rank, keyword="nosuch"),
        cli("unknown-subcommand", "rnak", f.jacobi, keyword="rnak"),
        cli("unknown-option", *rank, "--treads", "64", keyword="--treads"),
        cli("missing--device", "rank", f.jacobi, keyword="--device"),
    ]


def device_name_cases(f: Inputs) -> list[Case]:
    """Device names that name no device, for rank and for `devices NAME`."""
    names = {
        "empty": ("", "empty"),
        "nosuch": ("nosuch", "nosuch"),
        "V10": ("V10", "V10"),
        "H1000": ("H1000", "H1000"),
        "slash": ("/", "'/'"),
        "missing.toml": ("gpu.toml", "gpu.toml"),
        "spec-as-device": (str(f.jacobi), "device file"),
    }  # what a device file's errors begin with
    cases = [
        cli(f"rank--device={label}", "rank", f.jacobi, "--device", name, keyword=keyword)
        for label, (name, keyword) in names.items()
    ]
    cases += [
        cli(f"devices-{label}", "devices", name, keyword=keyword)
        for label, (name, keyword) in names.items()
        if label in ("empty", "nosuch", "V10", "slash")
    ]
    template = f.new("template.toml")
    existing = f.write("existing.toml", "# mine\n")
    cases += [
        cli(
            "devices-name-and-template",
            "devices",
            "V100",
            "--template",
            template,
            keyword="--template",
            outputs=[template],
        ),
        cli(
            "devices--template=missing-folder",
            "devices",
            "--template",
            f.tmp / "nofolder" / "t.toml",
            keyword="nofolder",
        ),
        cli(
            "devices--template=existing",
            "devices",
            "--template",
            existing,
            keyword="existing.toml",
            unchanged=[existing],
        ),
        cli("devices--template=empty", "devices", "--template", "", keyword="--template"),
    ]
    return cases


def device_file_cases(f: Inputs) -> list[Case]:
    """Device files with each required key missing, wrong types, implausible values, and unreadable files."""
    text = V100_DEVICE.read_text()
    raw = tomllib.loads(text)
    optional = {"aliases"}  # a device needs no alias: its name is enough
    cases = []
    for key in [k for k in raw if k not in optional and k != "curves"]:
        path = f.write(f"without_{key}.toml", without_key(text, key))
        cases.append(cli(f"device-without-{key}", "devices", path, keyword=key))
    for curve in raw["curves"]:
        path = f.write(f"without_{curve}.toml", without_key(text, f"curves.{curve}"))
        cases.append(cli(f"device-without-curve-{curve}", "devices", path, keyword=curve))
    edits = {  # label: (key, new value, what the message must name)
        "sm_count-string": ("sm_count", '"80"', "sm_count"),
        "clock-bool": ("clock_ghz", "true", "clock_ghz"),
        "max_block_dim-pair": ("max_block_dim", "[1024, 1024]", "max_block_dim"),
        "name-number": ("name", "5", "name"),
        "format_version-string": ("format_version", '"3"', "format_version"),
        "dram-nan": ("dram_bandwidth_gbs", "nan", "dram_bandwidth_gbs"),
        "dram-negative": ("dram_bandwidth_gbs", "-790.0", "dram_bandwidth_gbs"),
        "clock-tiny": ("clock_ghz", "1e-30", "clock_ghz"),
        "clock-huge": ("clock_ghz", "1e300", "clock_ghz"),
        "sm_count-huge": ("sm_count", "100000000", "sm_count"),
        "l1-one-byte": ("l1_capacity_bytes", "1", "l1_capacity_bytes"),
        "vendor-intel": ("vendor", '"intel"', "intel"),
        "architecture-banana": ("architecture", '"banana"', "banana"),
    }
    for label, (key, value, keyword) in edits.items():
        path = f.write(f"edited_{label}.toml", with_value(text, key, value))
        cases.append(cli(f"device-{label}", "rank", f.jacobi, "--device", path, keyword=keyword))
    curve_a = f.write("curve_a_text.toml", text.replace("a = 0.73", 'a = "x"', 1))
    no_value = f.write("no_value.toml", text.replace("[sm_count]\nvalue = 80\n", "[sm_count]\n", 1))
    unreadable = {
        "invalid-toml": f.write("invalid.toml", text + "\n[[[\n"),
        "non-utf8": f.write("latin1.toml", text.replace("# NVIDIA", "# NVIDIA \u00e9").encode("latin-1")),
        "empty": f.write("empty.toml", ""),
        "binary": f.write("binary.toml", bytes(range(256)) * 4),
        "folder": f.tmp / "folder.toml",
    }
    (f.tmp / "folder.toml").mkdir()
    cases += [
        cli("device-curve-a-text", "rank", f.jacobi, "--device", curve_a, keyword="l1_load_capacity_miss"),
        cli("device-sm_count-no-value", "rank", f.jacobi, "--device", no_value, keyword="sm_count"),
    ]
    cases += [
        cli(f"device-file-{label}", "rank", f.jacobi, "--device", path, keyword=path.name)
        for label, path in unreadable.items()
    ]
    return cases


def unreadable_files(f: Inputs, suffix: str) -> dict[str, tuple[str, str]]:
    """Paths that name no readable text file (label: path, what the message must name), with `suffix`."""
    folder = f.tmp / f"sub{suffix}"  # a name that does not say "folder" itself
    folder.mkdir()
    locked = f.write(f"locked{suffix}", "x = 1\n")
    locked.chmod(0)
    return {
        "empty-path": ("", "empty"),
        "missing": (str(f.tmp / f"missing{suffix}"), f"missing{suffix}"),
        "folder": (str(folder), "folder|directory"),
        "dev-null": ("/dev/null", "/dev/null"),
        "binary": (str(f.write(f"binary{suffix}", bytes(range(256)) * 4)), f"binary{suffix}"),
        "non-utf8": (
            str(f.write(f"latin1{suffix}", (JACOBI + "name = 'caf\u00e9'\n").encode("latin-1"))),
            f"latin1{suffix}",
        ),
        "no-read-permission": (str(locked), locked.name),
    }


def root_skip(label: str) -> str:
    return "root reads any file" if label == "no-read-permission" and os.geteuid() == 0 else ""


def input_path_cases(f: Inputs) -> list[Case]:
    """SPEC files, data sets and caches that are missing, folders, special, binary, not UTF-8 or unreadable."""
    cases = []
    for label, (path, keyword) in unreadable_files(f, ".py").items():
        cases.append(
            cli(f"rank-spec-{label}", "rank", path, "--device", "V100", keyword=keyword, skip=root_skip(label))
        )
    cases.append(cli("rank-spec-empty-file", "rank", f.write("empty.py", ""), "--device", "V100", keyword="empty.py"))
    cases.append(cli("rank-spec-txt", "rank", f.write("spec.txt", JACOBI), "--device", "V100", keyword="spec.txt"))
    cases += [
        cli(f"accesses-spec-{label}", "accesses", path, keyword=keyword)
        for label, (path, keyword) in unreadable_files(f, "_a.py").items()
        if label in ("missing", "binary")
    ]
    for label, (path, keyword) in unreadable_files(f, ".csv").items():
        if label in ("empty-path", "folder", "dev-null", "non-utf8", "no-read-permission"):
            cases.append(
                cli(
                    f"validate-data-{label}",
                    "validate",
                    path,
                    "--device",
                    "V100",
                    "--spec",
                    V100_SPEC,
                    keyword=keyword,
                    skip=root_skip(label),
                )
            )
    for label, (path, keyword) in unreadable_files(f, ".json").items():
        if label in ("missing", "folder", "dev-null"):
            cases.append(
                cli(f"tune-replay-{label}", "tune", f.tunable, "--device", "V100", "--replay", path, keyword=keyword)
            )
    cases.append(
        cli(
            "calibrate-data-missing",
            "calibrate",
            f.tmp / "none.csv",
            "--device",
            "V100",
            "--spec",
            V100_SPEC,
            keyword="none.csv",
        )
    )
    return cases


def output_path_cases(f: Inputs) -> list[Case]:
    """Outputs in missing folders, onto folders or inputs, twice, empty, ending in '/', onto /dev/full."""
    a_file = f.write("a_file.txt", "")
    rank = ["rank", f.jacobi, "--device", "V100"]
    tune = ["tune", f.tunable, "--device", "V100", "--replay", f.cache, "--budget", "2"]
    calibrate = ["calibrate", f.data, "--device", "V100", "--spec", V100_SPEC, "--align", "interior"]
    missing = f.tmp / "no_such_folder"
    same = f.new("same.out")
    new_dir = f.new("newdir")
    library_new = V100_DEVICE.with_name("bad-inputs-calibrated.toml")
    cases = [
        cli("rank--json=missing-folder", *rank, "--json", missing / "r.json", keyword=missing.name),
        cli("rank--json=a-folder", *rank, "--json", f.tmp, keyword=f.tmp.name),
        cli("rank--json=below-a-file", *rank, "--json", a_file / "r.json", keyword=a_file.name),
        cli("rank--json=empty", *rank, "--json", "", keyword="--json"),
        cli("rank--json=trailing-slash", *rank, "--json", f"{new_dir}/", keyword=new_dir.name, outputs=[new_dir]),
        cli("rank--json=dev-full", *rank, "--json", "/dev/full", keyword="/dev/full"),
        cli("rank--json=the-spec", *rank, "--json", f.jacobi, keyword="SPEC", unchanged=[f.jacobi]),
        cli("rank--csv=empty", *rank, "--csv", "", keyword="--csv"),
        cli("rank--csv=same-as--json", *rank, "--json", same, "--csv", same, keyword="--json", outputs=[same]),
        cli(
            "measure--out=missing-folder",
            "measure",
            f.jacobi,
            "--device",
            "H100",
            "--out",
            missing / "m.csv",
            keyword=missing.name,
        ),
        cli(
            "measure--out=trailing-slash",
            "measure",
            f.jacobi,
            "--device",
            "H100",
            "--out",
            f"{new_dir}/",
            keyword=new_dir.name,
            outputs=[new_dir],
        ),
        cli(
            "measure--out=the-spec",
            "measure",
            f.jacobi,
            "--device",
            "H100",
            "--out",
            f.jacobi,
            keyword="SPEC",
            unchanged=[f.jacobi],
        ),
        cli(
            "validate--out=a-file",
            "validate",
            f.data,
            "--device",
            "V100",
            "--spec",
            V100_SPEC,
            "--out",
            a_file,
            keyword=a_file.name,
            unchanged=[a_file],
        ),
        cli(
            "validate--out=empty",
            "validate",
            f.data,
            "--device",
            "V100",
            "--spec",
            V100_SPEC,
            "--out",
            "",
            keyword="--out",
        ),
        cli("calibrate--out=missing-folder", *calibrate, "--out", missing / "c.toml", keyword=missing.name),
        cli(
            "calibrate--out=trailing-slash", *calibrate, "--out", f"{new_dir}/", keyword=new_dir.name, outputs=[new_dir]
        ),
        cli(
            "calibrate--out=the-library-file",
            *calibrate,
            "--out",
            V100_DEVICE,
            keyword="library",
            unchanged=[V100_DEVICE],
        ),
        cli(
            "calibrate--out=into-the-library",
            *calibrate,
            "--out",
            library_new,
            keyword="library",
            outputs=[library_new],
        ),
        cli("calibrate--out=the-data", *calibrate, "--out", f.data, keyword="data set", unchanged=[f.data]),
        cli("tune--json=missing-folder", *tune, "--json", missing / "t.json", keyword=missing.name),
        cli("tune--json=trailing-slash", *tune, "--json", f"{new_dir}/", keyword=new_dir.name, outputs=[new_dir]),
        cli("tune--json=dev-full", *tune, "--json", "/dev/full", keyword="/dev/full"),
        cli("tune--json=the-cache", *tune, "--json", f.cache, keyword="cache", unchanged=[f.cache]),
    ]
    return cases


#: a block's copy of its tile into shared memory, and one shared load (`{load}`) from a tile of row pitch `{pitch}`
SHARED_COPY = (
    "from pystencils_perf_cuda import Array, CudaKernel, SharedArray\n"
    'kernel = CudaKernel(name="tile", arrays=(Array("a", "float", (64, 64)), Array("b", "float", (64, 64))), '
    'threads=(64, 64), indices={{"x": "blockIdx.x * blockDim.x + threadIdx.x", '
    '"y": "blockIdx.y * blockDim.y + threadIdx.y"}}, loads=("a[y][x]",), stores=("b[y][x]",), '
    'shared_arrays=(SharedArray("sh", "float", ("blockDim.y", "blockDim.x"), pitch={pitch}),), '
    'shared_stores=("sh[threadIdx.y][threadIdx.x]",), shared_loads=("{load}",))\n'
)
#: a copy of one row into shared memory by a loop that runs while `{bound}`, unrolled at run time by `{unroll}`
ROW_COPY = (
    "from pystencils_perf_cuda import Array, CudaKernel\n"
    'kernel = CudaKernel(name="row copy", arrays=(Array("a", "float", (4110,)), Array("b", "float", (4096,))), '
    'threads=(4096,), indices={{"col": "threadIdx.x + c * blockDim.x"}}, load_loops={{"c": (0, 15)}}, '
    'load_loop_bounds={{"c": "{bound}"}}, runtime_unroll={unroll}, loads=("a[blockIdx.x * blockDim.x + col]",), '
    'stores=("b[blockIdx.x * blockDim.x + threadIdx.x]",))\n'
)
SPEC_ERRORS = {  # label: (SPEC text, what the message must name)
    "syntax-error": ("assignments = [\n", "syntax"),
    "raises": ("raise RuntimeError('the grid file is gone')\n", "the grid file is gone"),
    "defines-nothing": ("x = 1\n", "kernel"),
    "kernel-None": ("kernel = None\n", "None"),
    "assignments-5": ("assignments = 5\n", "builtins.int"),
    "assignments-empty": ("assignments = []\n", "empty"),
    "kernel-text": ("kernel = 'jacobi'\n", "builtins.str"),
    "sys-exit-0": ("import sys\nsys.exit(0)\n", "exit"),
    "import-missing": ("import no_such_module_xyz\n", "no_such_module_xyz"),
    "four-dimensions": (
        'import pystencils as ps\nsrc, dst = ps.fields("src, dst: double[8, 8, 8, 4]")\n'
        "assignments = [ps.Assignment(dst[0, 0, 0, 0], src[1, 0, 0, 0] + src[-1, 0, 0, 0])]\n",
        "4 spatial dimensions",
    ),
    "cpu-kernel": (
        JACOBI + "kernel = ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.CPU))\n",
        "CPU",
    ),
    "variable-size-no-domain": (VARIABLE_SIZE, "domain"),
    "domain_shape-text": (JACOBI + "domain_shape = 'abc'\n", "'abc'"),
    "cuda-unknown-array": (
        "from pystencils_perf_cuda import Array, CudaKernel\n"
        'kernel = CudaKernel(name="copy", arrays=(Array("a", "double", (64, 64)),), '
        'threads=(64, 64), indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", '
        '"y": "blockIdx.y * blockDim.y + threadIdx.y"}, loads=("a[y][x]",), stores=("b[y][x]",))\n',
        "'b'",
    ),
    "cuda-unknown-shared-array": (SHARED_COPY.format(load="tyle[threadIdx.y][threadIdx.x]", pitch="None"), "'tyle'"),
    "cuda-shared-by-blockIdx": (SHARED_COPY.format(load="sh[blockIdx.y][threadIdx.x]", pitch="None"), "blockIdx"),
    "cuda-shared-pitch-negative": (
        SHARED_COPY.format(load="sh[threadIdx.y][threadIdx.x]", pitch="'blockDim.x - 64'"),
        "sh.stride0",
    ),
    "cuda-shared-pitch-short": (SHARED_COPY.format(load="sh[threadIdx.y][threadIdx.x]", pitch="4"), "pitch"),
    "cuda-shared-one-index": (SHARED_COPY.format(load="sh[threadIdx.y]", pitch="None"), "1 index"),
    "cuda-shared-load-outside": (
        SHARED_COPY.format(load="sh[threadIdx.y + 1][threadIdx.x]", pitch="None"),
        "of shared array 'sh'",
    ),
    "cuda-shared-extent-zero": (
        SHARED_COPY.format(load="sh[threadIdx.y][threadIdx.x]", pitch="None")
        + 'import dataclasses\nkernel = dataclasses.replace(kernel, shared_arrays=(SharedArray("sh", "float", '
        '("blockDim.y - 64", "blockDim.x")),))\n',
        "extent",
    ),
    "cuda-flops-negative": (
        SHARED_COPY.format(load="sh[threadIdx.y][threadIdx.x]", pitch="None")
        + "import dataclasses\nkernel = dataclasses.replace(kernel, flops_per_lup=-1.0)\n",
        "flops_per_lup",
    ),
    "cuda-registers-0": (
        SHARED_COPY.format(load="sh[threadIdx.y][threadIdx.x]", pitch="None")
        + "import dataclasses\nkernel = dataclasses.replace(kernel, registers_per_thread=0)\n",
        "registers_per_thread",
    ),
    "cuda-load-loop-bound-never-fails": (ROW_COPY.format(bound="col > 10", unroll=4), "load_loop_bounds 'c'"),
    "cuda-runtime-unroll-0": (ROW_COPY.format(bound="col < blockDim.x + 14", unroll=0), "runtime_unroll"),
}
SPEC_WARNINGS = {  # label: (SPEC text, device, what the warning must name): ranked, with a warning
    "in-place": (
        'import pystencils as ps\nsrc = ps.fields("src: double[66, 66]")\n'
        "assignments = [ps.Assignment(src[0, 0], (src[1, 0] + src[-1, 0]) / 2)]\n",
        "V100",
        "in-place",
    ),
    "fields-beyond-memory": (
        "import pystencils as ps\n"
        'src, dst = ps.fields("src, dst: double[100000, 100000, 100000]")\n'
        "assignments = [ps.Assignment(dst[0, 0, 0], (src[1, 0, 0] + src[-1, 0, 0]) / 2)]\n",
        "V100",
        "memory",
    ),
    "ghost_layers-0": (
        JACOBI + "kernel = ps.create_kernel(assignments, "
        "ps.CreateKernelConfig(target=ps.Target.CUDA, ghost_layers=0))\n",
        "V100",
        "outside",
    ),
    "hip-kernel-on-V100": (
        JACOBI + "kernel = ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.HIP))\n",
        "V100",
        "HIP",
    ),
    "cuda-kernel-on-MI250X": (
        JACOBI + "kernel = ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.CUDA))\n",
        "MI250X",
        "CUDA",
    ),
    "cuda-description-outside": (
        "from pystencils_perf_cuda import Array, CudaKernel\n"
        'kernel = CudaKernel(name="shifted", arrays=(Array("a", "double", (64, 64)), '
        'Array("b", "double", (64, 64))), threads=(64, 64), '
        'indices={"x": "blockIdx.x * blockDim.x + threadIdx.x", '
        '"y": "blockIdx.y * blockDim.y + threadIdx.y"}, loads=("a[y + 5000][x]",), '
        'stores=("b[y][x]",))\n',
        "V100",
        "outside",
    ),
}


def spec_content_cases(f: Inputs) -> list[Case]:
    """SPEC files that fail, define nothing usable, or describe kernels that rank only with a warning."""
    cases = []
    for label, (text, keyword) in SPEC_ERRORS.items():
        spec = f.write(f"spec_{label.replace('-', '_')}.py", text)
        cases.append(cli(f"rank-spec-{label}", "rank", spec, "--device", "V100", keyword=keyword))
        if label in ("syntax-error", "four-dimensions"):
            cases.append(cli(f"accesses-spec-{label}", "accesses", spec, keyword=keyword))
    for label, (text, device, keyword) in SPEC_WARNINGS.items():
        spec = f.write(f"spec_{label.replace('-', '_')}.py", text)
        block = "32x4x8" if "100000" in text else "32x4x1"  # 100000 points along z: 12500 blocks, within CUDA's
        cases.append(
            cli(
                f"rank-spec-{label}",
                "rank",
                spec,
                "--device",
                device,
                "--blocks",
                block,
                "--fold",
                "1x1x1",
                "--jobs",
                "1",
                keyword=keyword,
                expect="warning",
            )
        )
    cases.append(cli("accesses-spec-tunable-without-params", "accesses", f.tunable, keyword="--params"))
    for value, keyword in (("", "NAME=VALUE"), ("filter", "NAME=VALUE"), ("a=1,a=2", "'a' is given twice")):
        cases.append(
            cli(f"accesses--params={value or 'empty'}", "accesses", f.tunable, "--params", value, keyword=keyword)
        )
    return cases


def data_set_cases(f: Inputs) -> list[Case]:
    """Measured data sets (CSV) that are empty, mis-separated, short or long of cells, or of wrong numbers."""
    rows = V100_DATA.read_text().splitlines()
    header, row = rows[0], rows[1]  # 4,16,16,1,1,1,10.20,8.00,30.17,8.00,
    sets = {  # label: (text, what the message must name)
        "empty": ("", "empty.csv"),
        "header-only": (header + "\n", "no rows"),
        "semicolons": (v100_csv([row.replace(",", ";")], header.replace(",", ";")), "';'"),
        "extra-cell": (v100_csv([row + ",7.5"]), "more cells"),
        "missing-cell": (v100_csv([row.rsplit(",", 2)[0]]), "line 2"),
        "text-volume": (v100_csv([row.replace("10.20", "abc")]), "abc"),
        "text-block": (v100_csv([row.replace("4,16,16", "a,16,16", 1)]), "bx"),
        "zero-block": (v100_csv([row.replace("4,16,16", "0,16,16", 1)]), "block"),
        "negative-volume": (v100_csv([row.replace("10.20", "-10.20")]), "-10.2"),
        "nan-volume": (v100_csv([row.replace("10.20", "NaN")]), "nan"),
        "huge-volume": (v100_csv([row.replace("10.20", "1e300")]), "1e+300"),
        "missing-column": (v100_csv(["4,16,16,1,1,10.2"], "bx,by,bz,fx,fy,meas_dram_load_B_per_lup"), "fz"),
        "no-measurements": (v100_csv(["4,16,16,1,1,1"], "bx,by,bz,fx,fy,fz"), "meas_"),
        "same-launch-twice": (v100_csv([row, row.replace("10.20", "11.20")]), "4x16x16"),
    }
    cases = []
    for label, (text, keyword) in sets.items():
        data = f.write(f"{label.replace('-', '_')}.csv", text)
        cases.append(
            cli(
                f"validate-csv-{label}",
                "validate",
                data,
                "--device",
                "V100",
                "--spec",
                V100_SPEC,
                "--align",
                "interior",
                keyword=keyword,
            )
        )
        if label in ("empty", "semicolons", "negative-volume", "missing-column"):
            out = f.new("c.toml")
            cases.append(
                cli(
                    f"calibrate-csv-{label}",
                    "calibrate",
                    data,
                    "--device",
                    "V100",
                    "--spec",
                    V100_SPEC,
                    "--align",
                    "interior",
                    "--out",
                    out,
                    keyword=keyword,
                    outputs=[out],
                )
            )
    return cases


def cache_cases(f: Inputs) -> list[Case]:
    """Kernel Tuner caches that are empty, truncated, not JSON, or hold wrong block sizes and times."""
    good = json.dumps(kernel_tuner_cache(cache_entries()))

    def entries(**change) -> str:
        first = {**cache_entries()[0], **change}
        return json.dumps(kernel_tuner_cache([first, *cache_entries()[1:]]))

    caches = {  # label: (file name, bytes or text, what the message must name)
        "empty-table": ("empty_table.json", json.dumps({"cache": {}}), "empty"),
        "no-cache-table": ("no_table.json", json.dumps({"device_name": "x"}), "cache"),
        "entry-without-time": ("no_time.json", json.dumps({"cache": {"0": {"block_size_x": 32}}}), "time"),
        "truncated-gzip": ("truncated.json.gz", gzip.compress(good.encode())[:60], "truncated.json.gz"),
        "invalid-json": ("invalid.json", good[:-40] + "}{", "invalid.json"),
        "non-utf8": ("latin1.json", good.replace("Tesla", "T\u00e9sla").encode("latin-1"), "latin1.json"),
        "block-32.5": ("block_fraction.json", entries(block_size_x=32.5), "32.5"),
        "block-text-32": ("block_text.json", entries(block_size_x="32"), "'32'"),
        "time-1e300": ("time_huge.json", entries(time=1e300), "1e+300"),
        "time-1e-300": ("time_tiny.json", entries(time=1e-300), "1e-300"),
        "time-negative": ("time_negative.json", entries(time=-1), "-1"),
        "time-nan": ("time_nan.json", entries(time=float("nan")), "nan"),
        "all-failed": (
            "all_failed.json",
            json.dumps(kernel_tuner_cache([{**e, "time": "RuntimeFailedConfig"} for e in cache_entries()])),
            "none",
        ),
        "no-row-matches": (
            "filter6.json",
            json.dumps(kernel_tuner_cache([{**e, "filter": 6} for e in cache_entries()])),
            "filter",
        ),
        # KTT's own output (`Metadata`, `Results`), which reads as a cache does
        "ktt-time-unit": ("ktt_unit.json", json.dumps({"Metadata": {"TimeUnit": "Weeks"}, "Results": []}), "Weeks"),
        "ktt-configuration": (
            "ktt_configuration.json",
            json.dumps({"Metadata": {"TimeUnit": "Microseconds"}, "Results": [{"Configuration": 32, "Status": "Ok"}]}),
            "Configuration",
        ),
        "ktt-no-results": (
            "ktt_empty.json",
            json.dumps({"Metadata": {"TimeUnit": "Microseconds"}, "Results": []}),
            "no configurations",
        ),
    }
    in_both = ("empty-table", "truncated-gzip", "block-32.5", "all-failed")
    cases = []
    for label, (name, content, keyword) in caches.items():
        cache = f.write(name, content)
        cases.append(
            cli(f"validate-cache-{label}", "validate", cache, "--device", "V100", "--spec", f.tunable, keyword=keyword)
        )
        if label in in_both:
            cases.append(
                cli(f"tune-cache-{label}", "tune", f.tunable, "--device", "V100", "--replay", cache, keyword=keyword)
            )
    other_gpu = f.write("other_gpu.json", json.dumps(kernel_tuner_cache(cache_entries(), "NVIDIA A100-PCIE-40GB")))
    cases += [
        cli(
            "tune-cache-of-another-gpu",
            "tune",
            f.tunable,
            "--device",
            "V100",
            "--replay",
            other_gpu,
            "--jobs",
            "1",
            keyword="A100-PCIE-40GB",
            expect="warning",
        ),
        cli(
            "validate-cache-of-another-gpu",
            "validate",
            other_gpu,
            "--device",
            "V100",
            "--spec",
            f.tunable,
            "--jobs",
            "1",
            keyword="A100-PCIE-40GB",
            expect="warning",
        ),
        cli(
            "calibrate-on-a-cache",
            "calibrate",
            f.cache,
            "--device",
            "V100",
            "--spec",
            f.tunable,
            keyword="Kernel Tuner",
        ),
        cli(
            "calibrate-on-a-gz-cache",
            "calibrate",
            A4000_CACHE,
            "--device",
            "RTX-A4000",
            "--spec",
            ROOT / "validation/a100_convolution/convolution_tile1x1.py",
            keyword="Kernel Tuner",
        ),
        cli(
            "tune-replay-with--blocks",
            "tune",
            f.tunable,
            "--device",
            "V100",
            "--replay",
            f.cache,
            "--blocks",
            "32x1x1",
            keyword="--blocks",
        ),
        cli("tune-without-a-gpu", "tune", f.jacobi, "--device", "V100", keyword="cupy"),
        cli("measure-without-a-gpu", "measure", f.jacobi, "--device", "H100", "--out", f.new("m.csv"), keyword="cupy"),
    ]
    return cases


TUNABLE_SPECS = {  # label: (SPEC text, what the message must name)
    "fixed_parameters-5": (TUNABLE + "fixed_parameters = 5\n", "fixed_parameters"),
    "block_parameters-text": (TUNABLE + "block_parameters = 'bx'\n", "block_parameters"),
    "block_parameters-unknown": (TUNABLE + "block_parameters = ['bx', 'by']\n", "bx"),
    "lattice_updates-True": (TUNABLE + "lattice_updates = True\n", "lattice_updates"),
    "lattice_updates-0": (TUNABLE + "lattice_updates = 0\n", "lattice_updates"),
    "lattice_updates-text": (TUNABLE + "lattice_updates = '4096'\n", "lattice_updates"),
    "no-kernel_for": (TUNABLE.split("def kernel_for")[0], "kernel_for"),
    "no-lattice_updates": (TUNABLE.replace("lattice_updates = 64 * 64\n", ""), "lattice_updates"),
    "kernel_for-5": (TUNABLE + "kernel_for = 5\n", "kernel_for"),
    "kernel_for-returns-None": (TUNABLE + "def kernel_for(params):\n    return None\n", "None"),
    "kernel_for-raises": (TUNABLE + "def kernel_for(params):\n    raise KeyError('tile_size_x')\n", "tile_size_x"),
    "kernel_for-returns-5": (TUNABLE + "def kernel_for(params):\n    return 5\n", "kernel_for"),
}


def tunable_spec_cases(f: Inputs) -> list[Case]:
    """Tunable SPECs (`kernel_for`, `lattice_updates`, ...) with wrong values, for tune --replay and validate."""
    cases = []
    for label, (text, keyword) in TUNABLE_SPECS.items():
        spec = f.write(f"tunable_{label.replace('-', '_')}.py", text)
        cases.append(cli(f"tune-spec-{label}", "tune", spec, "--device", "V100", "--replay", f.cache, keyword=keyword))
        if label in ("kernel_for-returns-None", "kernel_for-raises"):
            cases.append(
                cli(f"validate-spec-{label}", "validate", f.cache, "--device", "V100", "--spec", spec, keyword=keyword)
            )
    return cases


API_ERRORS = {  # label: (body, what the message must name)
    "create_kernel-config-text": ('pp.create_kernel(asg, "CUDA", device="V100")', "config"),
    "create_kernel-device-nosuch": ('pp.create_kernel(asg, device="nosuch")', "nosuch"),
    "create_kernel-tune-negative": ('pp.create_kernel(asg, device="V100", tune=-1)', "tune"),
    "create_kernel-tune-fraction": ('pp.create_kernel(asg, device="V100", tune=2.5)', "tune"),
    "create_kernel-empty": ('pp.create_kernel([], device="V100")', "no accesses"),
    "create_lb_kernel-config-5": ('pp.create_lb_kernel(5, device="V100")', "lbm_config"),
    "rank-threads-and-blocks": ('pp.rank(asg, "V100", threads=64, blocks=[(32, 4, 1)])', "threads"),
    "rank-device-empty": ('pp.rank(asg, device="")', "empty"),
    "rank-block-zero": ('pp.rank(asg, "V100", blocks=[(0, 1, 1)])', "block"),
    "rank-block-fraction": ('pp.rank(asg, "V100", blocks=[(32.5, 1, 1)])', "32.5"),
    "rank-blocks-text": ('pp.rank(asg, "V100", blocks="axb")', "axb"),
    "rank-blocks-5": ('pp.rank(asg, "V100", blocks=5)', "blocks"),
    "rank-threads-0": ('pp.rank(asg, "V100", threads=0)', "threads"),
    "rank-threads-fraction": ('pp.rank(asg, "V100", threads=64.5)', "threads"),
    "rank-threads-text": ('pp.rank(asg, "V100", threads="64")', "threads"),
    "rank-threads-huge": ('pp.rank(asg, "V100", threads=2**70)', "threads"),
    "rank-model-nosuch": ('pp.rank(asg, "V100", model="nosuch")', "nosuch"),
    "rank-backend-nosuch": ('pp.rank(asg, "V100", backend="nosuch")', "nosuch"),
    "rank-prune-nosuch": ('pp.rank(asg, "V100", prune=["nosuch"])', "nosuch"),
    "rank-jobs-negative": ('pp.rank(asg, "V100", jobs=-1)', "jobs"),
    "rank-domain-zero": ('pp.rank(asg, "V100", domain_shape=(0, 0))', "domain"),
    "rank-kernel-None": ('pp.rank(None, "V100")', "None"),
    "rank-kernel-5": ('pp.rank(5, "V100")', "builtins.int"),
    "rank-kernel-empty": ('pp.rank([], "V100")', "empty"),
    "harvest-None": ("pp.harvest(None)", "None"),
    "select-None": ("pp.select(None)", "ranking"),
}
API_DEVICE_ERRORS = {  # label: (body, what the message must name): no pystencils needed
    "get_device-nosuch": ('pp.get_device("nosuch")', "nosuch"),
    "get_device-empty": ('pp.get_device("")', "empty"),
    "get_device-None": ("pp.get_device(None)", "None"),
    "get_device-missing-file": ('pp.get_device("/nonexistent/gpu.toml")', "gpu.toml"),
}
API_WARNINGS = {  # label: (body, what the warning must name)
    "rank-in-place": (
        'src = ps.fields("src: double[66, 66]")\n'
        'pp.rank([ps.Assignment(src[0, 0], (src[1, 0] + src[-1, 0]) / 2)], "V100", blocks=[(32, 4, 1)], '
        "folds=[(1, 1, 1)], jobs=1)",
        "in-place",
    ),
    "rank-fields-beyond-memory": (
        'a, b = ps.fields("a, b: double[100000, 100000, 100000]")\n'
        'pp.rank([ps.Assignment(b[0, 0, 0], (a[1, 0, 0] + a[-1, 0, 0]) / 2)], "V100", '
        "blocks=[(32, 4, 8)], folds=[(1, 1, 1)], jobs=1)",
        "memory",
    ),
}


def api_cases(f: Inputs) -> list[Case]:
    """Calls of the Python API with wrong arguments, and two that rank with a warning."""
    cases = [api(f"api-{label}", body, keyword=keyword) for label, (body, keyword) in API_ERRORS.items()]
    cases += [
        api(f"api-{label}", body, keyword=keyword, prelude=False)
        for label, (body, keyword) in API_DEVICE_ERRORS.items()
    ]
    cases += [
        api(f"api-{label}", body, keyword=keyword, expect="warning") for label, (body, keyword) in API_WARNINGS.items()
    ]
    return cases


CASE_GROUPS = (
    number_option_cases,
    triple_option_cases,
    name_option_cases,
    device_name_cases,
    device_file_cases,
    input_path_cases,
    output_path_cases,
    spec_content_cases,
    data_set_cases,
    cache_cases,
    tunable_spec_cases,
    api_cases,
)


def build_cases(f: Inputs) -> list[Case]:
    """Every case, its inputs written into `f`'s folder."""
    cases = [case for group in CASE_GROUPS for case in group(f)]
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"case ids used twice: {duplicates}"
    return cases


# -- running and judging ---------------------------------------------------------------------------------------


def contents(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def restore(case: Case, originals: dict[Path, bytes | None]) -> None:
    """Remove the outputs a case should not have written, and put back the files it should not have changed."""
    for path in case.outputs:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    for path in case.unchanged:
        if contents(path) != originals[path] and originals[path] is not None:
            path.write_bytes(originals[path])


def command_of(case: Case) -> list[str]:
    if case.kind == "cli":
        return [sys.executable, "-c", CLI_PROGRAM, *case.argv]
    return [sys.executable, "-c", case.argv[0]]


def names(line: str, keyword: str) -> bool:
    """Whether `line` names `keyword`, or one of its "|"-separated alternatives, case ignored."""
    return any(k.lower() in line.lower() for k in keyword.split("|"))


def classify(case: Case, returncode: int | None, stderr: str, left_behind: list[str]) -> tuple[str, bool, str]:
    """How a case ended: (outcome, whether it counts as clean, the line that tells).

    `returncode` is None for a timeout; `left_behind` names the declared outputs that exist afterwards and the
    files that changed. See the module's docstring for the outcomes.
    """
    error_prefix, warning_prefix = PREFIXES[case.kind]
    lines = [line for line in stderr.splitlines() if line.strip()]
    warnings = [line for line in lines if line.startswith(warning_prefix)]
    others = [line for line in lines if not line.startswith(warning_prefix)]
    named = [line for line in lines if names(line, case.keyword)]
    if returncode is None:
        return "unclear", False, f"timed out after {TIMEOUT_S} s"
    if TRACEBACK in stderr:
        return "traceback", False, lines[-1]
    if returncode == 2 and others == lines[-1:] and others[0].startswith(error_prefix):  # warnings, then it
        if left_behind:
            return "unclear", False, f"left behind {', '.join(left_behind)}: {others[0]}"
        if not names(others[0], case.keyword):
            return "unclear", False, f"does not name {case.keyword!r}: {others[0]}"
        return "clean", True, others[0]
    if returncode == 0 and warnings and not others:
        if not named:
            return "unclear", False, f"no warning names {case.keyword!r}: {warnings[0]}"
        return "warned", case.expect == "warning", named[0]
    if returncode == 0 and not lines:
        return "silent", False, "(exit 0, nothing on stderr)"
    return "unclear", False, f"exit {returncode}: {lines[0] if lines else '(nothing on stderr)'}"


def run_case(case: Case, env: dict[str, str], originals: dict[Path, bytes | None]) -> Outcome:
    """Run one case and judge it; an output it left is removed and a file it changed restored (the device
    library's file among them)."""
    if case.skip:
        return Outcome(case, "skipped", False, case.skip)
    try:
        done = subprocess.run(
            command_of(case), cwd=ROOT, env=env, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S
        )
        returncode, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired as e:
        partial = e.stderr or b""  # what the child wrote before it was stopped, undecoded
        returncode, stderr = None, partial.decode(errors="replace") if isinstance(partial, bytes) else partial
    left_behind = [str(p) for p in case.outputs if p.exists() or p.is_symlink()]
    left_behind += [f"{p} changed" for p in case.unchanged if contents(p) != originals[p]]
    outcome, clean, message = classify(case, returncode, stderr, left_behind)
    restore(case, originals)
    return Outcome(case, outcome, clean, message)


def table(outcomes: list[Outcome]) -> str:
    """One row per case, those that are not clean first."""
    rows = sorted(outcomes, key=lambda o: (o.clean, OUTCOMES.index(o.outcome), o.case.id))
    width = max(len(o.case.id) for o in outcomes)
    lines = [f"{'id':<{width}} | kind | outcome   | stderr (the error line, a traceback's last line, or the first)"]
    for o in rows:
        outcome = o.outcome if o.clean or o.outcome != "warned" else "warned!"
        lines.append(f"{o.case.id:<{width}} | {o.case.kind:<4} | {outcome:<9} | {o.message[:140]}")
    return "\n".join(lines)


def summary(outcomes: list[Outcome], seconds: float) -> tuple[str, bool]:
    """The summary line and whether the clean share reaches `CLEAN_SHARE`."""
    ran = [o for o in outcomes if o.outcome != "skipped"]
    count = {name: sum(o.outcome == name for o in ran) for name in OUTCOMES}
    warned_right = sum(o.outcome == "warned" and o.clean for o in ran)
    not_clean = [o for o in ran if not o.clean]
    parts = [f"{count[name]} {name}" for name in ("traceback", "silent", "unclear") if count[name]]
    if count["warned"] - warned_right:
        parts.append(f"{count['warned'] - warned_right} warned where an error was due")
    share = (count["clean"] + warned_right) / len(ran) if ran else 1.0
    skipped = len(outcomes) - len(ran)
    line = (
        f"{len(ran)} inputs: {count['clean']} clean (one line, exit 2, nothing partial), {warned_right} right "
        f"with a warning, {len(not_clean)} not clean{': ' + ', '.join(parts) if parts else ''}; "
        f"{share:.1%} clean (at least {CLEAN_SHARE:.0%} wanted)"
        + (f"; {skipped} skipped" if skipped else "")
        + f"; {seconds:.0f} s"
    )
    return line, share >= CLEAN_SHARE


def environment(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYSTENCILS_CACHE_DIR": str(tmp / "pystencils_cache"),
        "PYSTENCILS_PERF_TUNING_DIR": str(tmp / "tuning_records"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--only", default="", metavar="SUBSTRING", help="run only the cases whose id contains it")
    parser.add_argument("--list", action="store_true", help="list the cases and run none")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bad_inputs_"))
    try:
        cases = [c for c in build_cases(Inputs(tmp)) if args.only in c.id]
        if not cases:
            parser.error(f"no case id contains {args.only!r} (--list lists them)")
        if args.list:
            for c in cases:
                skipped = f" | skipped: {c.skip}" if c.skip else ""
                print(f"{c.id} | {c.kind} | expects {c.expect} naming {c.keyword!r}{skipped}")
            print(f"{len(cases)} cases")
            return 0
        env = environment(tmp)
        originals = {p: contents(p) for c in cases for p in c.unchanged}
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(lambda c: run_case(c, env, originals), cases))
        line, enough = summary(outcomes, time.monotonic() - start)
        print(table(outcomes))
        print(line)
        return 0 if enough else 1
    finally:
        for locked in tmp.rglob("locked*"):
            locked.chmod(0o600)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
