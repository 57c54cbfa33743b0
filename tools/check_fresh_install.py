"""A fresh install without extras prints what the README shows for its main command (issue 28, item 20).

    python3 tools/check_fresh_install.py

Installs this checkout into a new virtual environment (no extras, no plugins), runs the README's main
command there and compares its output with the block the README shows after it; prints the difference
and exits 1 where they differ. `.ci/run` runs it.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "python3 -m pip install -e . && "


def readme_main_command() -> tuple[str, str]:
    """The README's main command (after its install step) and the output block that follows it."""
    text = (ROOT / "README.md").read_text()
    match = re.search(r"```sh\n" + re.escape(INSTALL) + r"(.+?)\n```\n\n```\n(.*?)```\n", text, re.S)
    if match is None:
        sys.exit("README.md: no main command followed by its output block")
    return match.group(1), match.group(2)


def main() -> int:
    command, shown = readme_main_command()
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-fresh-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)], check=True)
        env = {
            **os.environ,
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "PYSTENCILS_CACHE_DIR": str(Path(folder) / "pystencils-cache"),
            "HOME": folder,
        }
        done = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return 1
    if done.stdout != shown:
        sys.stdout.writelines(
            difflib.unified_diff(shown.splitlines(True), done.stdout.splitlines(True), "README.md", "fresh install")
        )
        return 1
    print(f"a fresh install prints what README.md shows for `{command}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
