"""Include the repository's Markdown files (validation reports) in the docs as they are.

The reports under ``validation/`` are written for reading in the repository: they link
to further reports and files beside them, which are no pages of this site, and some
skip heading levels (``#`` then ``###``). On the ``include-read`` event of a file
outside ``docs/`` this

- turns a link to a repository file into its text and the file's path from the
  repository root (``[plots](throughput/report.md)`` -> ``plots (`validation/.../throughput/report.md`)``),
  a link to the repository's README.md into its text (this site is its documentation);
  web links and images stay;
- lowers a heading that skips levels to one below the previous heading.

Code blocks are left alone. Nothing is written to the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})(\s.*)$")
FENCE = re.compile(r"^\s*(```|~~~)")


def repo_path(target: str, included: Path, root: Path) -> str:
    """The path of a relative link's target from the repository root."""
    path, _, _anchor = target.partition("#")
    return (included.parent / path).resolve().relative_to(root).as_posix()


def rewrite(text: str, included: Path, root: Path) -> str:
    """`text` of the file `included` (absolute) with repository links as paths and no skipped heading levels."""
    out, in_code, previous = [], False, 0
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        if in_code or FENCE.match(line):
            out.append(line)
            continue
        heading = HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if previous and level > previous + 1:
                level = previous + 1
            previous = level
            line = "#" * level + heading.group(2)

        def link(match: re.Match) -> str:
            label, target = match.groups()
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                return match.group(0)
            path = repo_path(target, included, root)
            return label if path == "README.md" else f"{label} (`{path}`)"

        out.append(LINK.sub(link, line))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _include_read(app, relative_path, parent_docname, content) -> None:
    srcdir = Path(app.srcdir).resolve()
    included = (srcdir / relative_path).resolve()
    if included.suffix != ".md" or srcdir in included.parents:
        return
    content[0] = rewrite(content[0], included, srcdir.parent)


def setup(app):
    app.connect("include-read", _include_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
