"""Start-up time of the command line and of ``import pystencils_perf``, each in fresh processes.

    python benchmarks/bench_startup.py [--runs 5]

Times ``pystencils-perf --help``, ``pystencils-perf devices`` and
``python3 -c "import pystencils_perf"``: the median wall time of `--runs`
processes each, after one untimed run that fills the disk cache and writes the
bytecode. Prints one row per command and exits non-zero if the command line
misses its target (issue 55: 0.5 s for ``--help`` and ``devices``, which need
neither a plugin nor sympy, numpy or a generator; tests/test_imports.py checks
the imports themselves). The import's row has no target: it shows what every
command pays before it does anything.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: seconds of wall time, median of fresh processes
TARGET_SECONDS = 0.5


def _cli() -> list[str]:
    """The installed ``pystencils-perf`` script (beside this Python's executable, else on PATH)."""
    script = Path(sys.executable).with_name("pystencils-perf")
    found = str(script) if script.is_file() else shutil.which("pystencils-perf")
    if found is None:
        sys.exit("bench_startup: no pystencils-perf script installed (pip install -e .)")
    return [found]


def _median_seconds(argv: list[str], runs: int) -> float:
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per command (default 5)")
    args = parser.parse_args(argv)
    cli = _cli()
    commands = [
        ("pystencils-perf --help", [*cli, "--help"], TARGET_SECONDS),
        ("pystencils-perf devices", [*cli, "devices"], TARGET_SECONDS),
        ('python3 -c "import pystencils_perf"', [sys.executable, "-c", "import pystencils_perf"], None),
    ]
    print(f"{'command':<36} {'median s':>9} {'target s':>9}")
    missed = []
    for label, command, target in commands:
        seconds = _median_seconds(command, args.runs)
        print(f"{label:<36} {seconds:>9.3f} {'-' if target is None else f'{target:.1f}':>9}")
        if target is not None and seconds > target:
            missed.append(label)
    if missed:
        print(f"missed the target: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
