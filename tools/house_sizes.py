"""The house's sizes at git revisions, side by side (issue 57's before and after).

    python3 tools/house_sizes.py 324b377 HEAD

Per revision: the package's modules and lines (median, largest), module docstrings (median and longest, in lines;
how many cite ``validation/``), code lines over 100 and 120 characters, the import graph's cycles and layer problems (this
tree's `tools/import_graph.py` run on that revision's package), the keywords of the entry points `rank`,
`create_kernel` and `measure`, and the tracked bytes (all, `validation/`, PNG figures). Reads the revisions with
``git archive`` into temporary folders; writes nothing else.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "pystencils_perf"
#: entry points whose keywords are counted: (module path in the package, function)
ENTRY_POINTS = (
    ("rank.py", "rank"),
    ("adapters/pystencils/api.py", "create_kernel"),
    ("adapters/pystencils/measure.py", "measure"),
)
#: a citation of the validation folder (not of docs/validation/)
CITES_VALIDATION = re.compile(r"(?<!docs/)\bvalidation/")


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True).stdout


def tracked_bytes(rev: str) -> dict[str, float]:
    """MB tracked in all, under validation/, and in PNG files (with their count)."""
    total = validation = png = 0
    count = 0
    for line in _git("ls-tree", "-r", "-l", rev).decode().splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size == "-":
            continue
        size = int(size)
        total += size
        validation += size if path.startswith("validation/") else 0
        if path.endswith(".png"):
            png, count = png + size, count + 1
    return {"tracked MB": total / 1e6, "validation/ MB": validation / 1e6, "PNG MB": png / 1e6, "PNG files": count}


def package_sizes(root: Path) -> dict[str, float]:
    """Modules, lines and docstrings of the package at `root`."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    lines, docstrings, citing, over_100, over_120 = [], [], 0, 0, 0
    for path in files:
        text = path.read_text()
        lines.append(text.count("\n"))
        over_100 += sum(len(line) > 100 for line in text.splitlines())
        over_120 += sum(len(line) > 120 for line in text.splitlines())
        doc = ast.get_docstring(ast.parse(text)) or ""
        docstrings.append(len(doc.splitlines()))
        citing += bool(CITES_VALIDATION.search(doc))
    return {
        "modules": len(files),
        "lines": sum(lines),
        "lines per module, median": statistics.median(lines),
        "lines per module, largest": max(lines),
        "module docstring lines, median": statistics.median(docstrings),
        "module docstring lines, longest": max(docstrings),
        "module docstrings citing validation/": citing,
        "code lines over 100 characters": over_100,
        "code lines over 120 characters (the formatter's limit)": over_120,
    }


def entry_point_keywords(root: Path) -> dict[str, int]:
    """Parameters of each entry point (those after ``*`` included), where the revision has it."""
    counts = {}
    for module, name in ENTRY_POINTS:
        path = root / PACKAGE / module
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                a = node.args
                counts[f"{name}() parameters"] = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
    return counts


def import_problems(root: Path) -> dict[str, int]:
    """Cycles and all problems this tree's import-graph check finds in the package at `root`."""
    spec = importlib.util.spec_from_file_location("_import_graph", REPO / "tools/import_graph.py")
    graph = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph)
    graph.ROOT = root / PACKAGE
    out = io.StringIO()
    with redirect_stdout(out):
        graph.main([])
    text = out.getvalue()
    return {
        "import cycles": sum("cycle" in line for line in text.splitlines() if line.startswith("  ")),
        "import-graph problems": int(text.rsplit(" problems", 1)[0].rsplit(",", 1)[1]),
    }


def sizes(rev: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tarfile.open(fileobj=io.BytesIO(_git("archive", rev, PACKAGE, "tools"))).extractall(root, filter="data")
        return {
            **package_sizes(root),
            **entry_point_keywords(root),
            **import_problems(root),
            **tracked_bytes(rev),
        }


def main(argv=None) -> int:
    revisions = (argv if argv is not None else sys.argv[1:]) or ["HEAD"]
    columns = {rev: sizes(rev) for rev in revisions}
    names = list(dict.fromkeys(k for c in columns.values() for k in c))
    print("| | " + " | ".join(revisions) + " |")
    print("|---|" + "---|" * len(revisions))
    for name in names:
        cells = [columns[rev].get(name) for rev in revisions]
        print(
            f"| {name} | "
            + " | ".join("-" if v is None else f"{v:g}" if isinstance(v, int) else f"{v:.1f}" for v in cells)
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
