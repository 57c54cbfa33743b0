"""Every output the docs show is what its command prints now (issue 58, item 2).

A documented block is compared line by line with what the command prints; a line ``...`` (any indentation)
in the block stands for any number of printed lines, and lines that report how long something took on the
machine that ran it (`TIMING`) are left out on both sides. The README's main command is checked after a fresh
install by `tools/check_fresh_install.py`, and its replay command by `tests/test_tune.py`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: lines that report a duration measured on the machine that printed them
TIMING = re.compile(r"^\S.* took [\d.]+ s$")


def documented_block(markdown: Path, after: str) -> list[str]:
    """The lines of the first fenced block (```` ``` ```` or ```` ```text ````) that follows the text `after`."""
    text = markdown.read_text()
    start = text.index(after) + len(after)
    match = re.compile(r"^```(?:text)?\n(.*?)^```$", re.M | re.S).search(text, start)
    assert match, f"{markdown.name}: no output block after {after!r}"
    return match.group(1).splitlines()


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` is `shown`, each ``...`` line of `shown` standing for any number of printed lines."""
    shown = [line for line in shown if not TIMING.match(line)]
    printed = [line for line in printed if not TIMING.match(line)]
    if not shown:
        return not printed
    if shown[0].strip() == "...":
        return any(matches(shown[1:], printed[k:]) for k in range(len(printed) + 1))
    return bool(printed) and shown[0] == printed[0] and matches(shown[1:], printed[1:])


def run(command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env_args = {"PYSTENCILS_CACHE_DIR": str(tmp_path / "cache"), "PYSTENCILS_PERF_TUNING_DIR": str(tmp_path / "rec")}

    argv = shlex.split(command)
    if argv[0] == "python3":
        argv[0] = sys.executable
    elif argv[0] == "pystencils-perf":  # the console script of this interpreter's install
        argv = [
            sys.executable,
            "-c",
            "import sys; from pystencils_perf.cli import main; sys.exit(main(sys.argv[1:]))",
            *argv[1:],
        ]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **env_args})


#: (markdown file, the text the output block follows, the command that prints it, its exit status)
DOCUMENTED = [
    ("docs/getting-started.md", "It prints\n", "python3 examples/quickstart.py", 0),
    (
        "docs/cli.md",
        "must not be an existing file.\n",
        "pystencils-perf rank examples/star3d_r4.py --device V100 --blocks 32x32",
        2,
    ),
    (
        "plugins/kernel_tuner/README.md",
        "`--dry-run` printed",
        "python3 plugins/kernel_tuner/examples/tune_star3d.py --dry-run",
        0,
    ),
    ("plugins/an5d/README.md", "`compare.py` prints", "python3 plugins/an5d/examples/compare.py", 0),
    (
        "validation/rtx2080ti_convolution/shared_wavefronts.md",
        "shared_wavefronts_study.py` prints",
        "python3 validation/rtx2080ti_convolution/shared_wavefronts_study.py",
        0,
    ),
    (
        "validation/rtx2080ti_convolution/shared_wavefronts.md",
        "copy_unroll_study.py` counts the copy both ways",
        "python3 validation/rtx2080ti_convolution/copy_unroll_study.py",
        0,
    ),
    (
        "plugins/hhc/README.md",
        "## What `examples/paper_numbers.py` prints",
        "python3 plugins/hhc/examples/paper_numbers.py",
        0,
    ),
    (
        "plugins/ryoo/README.md",
        "## The paper's example (`examples/matmul.py`",
        "python3 plugins/ryoo/examples/matmul.py",
        0,
    ),
    (
        "plugins/ryoo/README.md",
        "## On our measured spaces (`examples/pareto_on_measured.py`)",
        "python3 plugins/ryoo/examples/pareto_on_measured.py",
        0,
    ),
]


@pytest.mark.parametrize("markdown, after, command, status", DOCUMENTED, ids=[d[2] for d in DOCUMENTED])
def test_documented_output_is_what_the_command_prints(tmp_path, markdown, after, command, status):
    shown = documented_block(ROOT / markdown, after)
    if shown and shown[0].startswith("$ "):  # a block that shows its command
        assert shown[0] == f"$ {command}"
        shown = shown[1:]
    done = run(command, tmp_path)
    assert done.returncode == status, done.stderr[-2000:]
    printed = (done.stdout + done.stderr).splitlines()
    assert matches(shown, printed), "\n".join(["shown:", *shown, "printed:", *printed])


def test_the_getting_started_main_command_shows_the_readmes_output():
    """The main command's output is shown twice; the README's is checked after a fresh install."""
    command = "pystencils-perf rank examples/star3d_r4.py --device V100 --head 5"
    readme = documented_block(ROOT / "README.md", command + "\n```\n")
    assert documented_block(ROOT / "docs" / "getting-started.md", command + "\n```\n") == readme


def test_dots_stand_for_any_lines_and_nothing_else():
    assert matches(["a", "  ...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert matches(["a", "pruning took 8.5 s"], ["a", "pruning took 1.9 s"])
