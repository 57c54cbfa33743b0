"""The README front page and the Sphinx docs agree with the code they show (fast: no Sphinx build here).

The build itself, with its executed notebooks and warnings as errors, runs in `.ci/run`.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import re
import sys
from pathlib import Path

import pytest

import pystencils_perf

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
MAIN_COMMAND = "python3 -m pip install -e . && pystencils-perf rank examples/star3d_r4.py --device V100 --head 5"
TEST_COMMAND = (
    "python3 -m pip install -e '.[test]' -e 'plugins/loopy[test]' -e 'plugins/cuda[test]' "
    "-e 'plugins/kernel_tuner[test]' -e 'plugins/an5d[test]' -e 'plugins/ryoo[test]' -e 'plugins/hhc[test]' "
    "-e 'plugins/tracesim[test]' && python3 -m pytest -q"
)


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def notebooks() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.ipynb") if "_build" not in p.parts and ".ipynb_checkpoints" not in p.parts)


def conf_values() -> dict:
    """The constant assignments of docs/conf.py, read without running it (it changes the environment)."""
    values = {}
    for node in ast.parse((DOCS / "conf.py").read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return values


def test_readme_is_a_short_front_page():
    assert len(README.read_bytes()) < 8192


def test_readme_quick_start_is_the_example_verbatim():
    """Pasting the README's quick start runs examples/quickstart.py, cache lines included (issue 28, item 21)."""
    quickstart = (ROOT / "examples" / "quickstart.py").read_text()
    assert "use_temporary_pystencils_cache()" in quickstart
    assert quickstart in fenced_blocks(README.read_text(), "python")


def test_docs_quick_start_includes_the_example_file():
    text = (DOCS / "getting-started.md").read_text()
    assert re.search(r"^```\{literalinclude\} \.\./examples/quickstart\.py$", text, re.M)


def test_set_up_commands_are_the_readmes_and_ci_runs_the_test_command():
    readme_blocks = fenced_blocks(README.read_text(), "sh")
    assert MAIN_COMMAND + "\n" in readme_blocks
    assert TEST_COMMAND + "\n" in readme_blocks
    getting_started = (DOCS / "getting-started.md").read_text()
    assert MAIN_COMMAND in getting_started and TEST_COMMAND in getting_started
    ci = (ROOT / ".ci" / "run").read_text().replace("pip install -q ", "pip install ")  # quiet pip, same command
    assert TEST_COMMAND in ci


def test_ci_builds_the_docs_with_warnings_as_errors_after_the_tests():
    ci = (ROOT / ".ci" / "run").read_text()
    build = re.search(r"^python3 -m sphinx -W --keep-going .*-b html docs docs/_build/html$", ci, re.M)
    assert build and ci.index("python3 -m pytest -q") < build.start()
    assert "pip install -q -e '.[docs]'" in ci[: build.start()]


def test_docs_extra_brings_what_conf_py_loads():
    import tomllib

    extra = " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["docs"])
    for package in (
        "sphinx",
        "myst-nb",
        "furo",
        "sphinx-argparse",
        "ipykernel",
        "matplotlib",
        "sphinx-mathjax-offline",
    ):
        assert re.search(rf"(^| ){package}\b", extra), package
    conf = conf_values()
    assert {"myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinxarg.ext", "sphinx-mathjax-offline"} <= set(
        conf["extensions"]
    )
    assert conf["html_theme"] == "furo"


def test_notebooks_are_executed_at_build_time_and_errors_fail_it():
    conf = conf_values()
    assert conf["nb_execution_mode"] == "force"
    assert conf["nb_execution_raise_on_error"] is True
    assert conf.get("nb_execution_allow_errors", False) is False


@pytest.mark.parametrize("notebook", notebooks(), ids=lambda p: str(p.relative_to(DOCS)))
def test_notebook_keeps_the_cache_out_of_home_and_stores_no_outputs(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    first = cells[0]
    assert first["cell_type"] == "code"
    source = "".join(first["source"])
    assert "use_temporary_pystencils_cache()" in source or "PYSTENCILS_CACHE_DIR" in source
    assert not any(c.get("outputs") for c in cells if c["cell_type"] == "code")  # what is shown is what the build ran


def test_every_tutorial_is_in_the_tutorials_toctree():
    """Adding a tutorial is its notebook plus one line in tutorials/index.md; a forgotten line fails here."""
    index = (DOCS / "tutorials" / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}\n(.*?)```", index, re.S).group(1)
    listed = {line.strip() for line in toctree.splitlines() if line.strip() and not line.startswith(":")}
    present = {p.stem for p in (DOCS / "tutorials").iterdir() if p.suffix in (".ipynb", ".md") and p.stem != "index"}
    assert listed == present
    assert len(present) >= 3


def test_api_reference_documents_the_public_api():
    api = (DOCS / "api.md").read_text()
    for name in pystencils_perf.__all__:
        assert re.search(rf"^\.\. auto\w+:: pystencils_perf\.{name}\b", api, re.M), name
    for qualified in ("pystencils_perf.predict.Prediction", "pystencils_perf.ranking.RankedCandidate"):
        assert f":: {qualified}" in api


def test_cli_reference_is_generated_from_the_parser():
    cli = (DOCS / "cli.md").read_text()
    assert re.search(r"```\{argparse\}\n:module: pystencils_perf\.cli\n:func: build_parser\n", cli)
    hooks = (DOCS / "plugins" / "index.md").read_text()
    assert ".. automodule:: pystencils_perf.hookspecs" in hooks


def test_public_docstrings_are_numpy_style():
    from pystencils_perf.predict import Prediction

    for obj, section in [
        (pystencils_perf.rank, "Parameters"),
        (pystencils_perf.select, "Parameters"),
        (pystencils_perf.create_kernel, "Parameters"),
        (pystencils_perf.create_lb_kernel, "Parameters"),
        (pystencils_perf.Ranking, "Attributes"),
        (Prediction, "Attributes"),
        (pystencils_perf.Device, "Attributes"),
    ]:
        doc = obj.__doc__
        assert re.search(rf"^\s*{section}\n\s*-{{{len(section)}}}$", doc, re.M), obj.__name__
        assert ":param " not in doc, obj.__name__  # one convention, not two


def test_seconds_per_lup_is_documented_as_a_dict():
    """Item 22 of issue 28: `Prediction.seconds_per_lup` is a dict by term, not a number."""
    from pystencils_perf.predict import Prediction

    assert re.search(r"seconds_per_lup : dict", Prediction.__doc__)
    for page in ("api.md", "cli.md", "model/index.md"):
        assert re.search(r"seconds_per_lup`[^.]* dict by term", (DOCS / page).read_text()), page


def test_one_set_of_nvrtc_wheels_and_no_extra_that_clashes():
    """Item 23 of issue 28: two extras brought two releases of the same wheels into the same folders. Now the
    CUDA 11.8 wheels are a dependency of every install (item 20: a fresh install ranks as the README shows), and
    no extra brings another release, nor do the docs suggest one."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("nvidia-cuda-nvrtc-cu11==11.8") for d in project["dependencies"])
    extras = [d for deps in project["optional-dependencies"].values() for d in deps]
    assert not any(d.startswith("nvidia-cuda-") for d in extras)
    for text in (README.read_text(), (DOCS / "getting-started.md").read_text()):
        assert "pystencils-perf[nvrtc]" not in text and "`nvrtc` extra" not in text


def test_devices_page_table_is_the_librarys():
    spec = importlib.util.spec_from_file_location("library_table", ROOT / "validation" / "devices" / "library_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = module.summary_table(pystencils_perf.list_devices())
    assert table.strip() in (DOCS / "devices.md").read_text()


def test_repository_markdown_is_included_with_links_as_paths():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from repo_files import rewrite
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    report = ROOT / "validation" / "a100_convolution" / "report.md"
    text = (
        "# Title\n\n### skipped\n\nSee [plots](throughput/report.md), [web](https://x.org) and ![p](a.png).\n"
        "```sh\n# a comment, not a heading\n```\n[home](../../README.md)\n"
    )
    out = rewrite(text, report, ROOT)
    assert "## skipped" in out and "# a comment, not a heading" in out
    assert "plots (`validation/a100_convolution/throughput/report.md`)" in out
    assert "[web](https://x.org)" in out and "![p](a.png)" in out
    assert "\nhome\n" in out


def test_the_gpu_measurements_carry_their_provenance():
    """Measured GPU numbers come only from a real run, committed with device, driver and date: every data set
    `measure` wrote on the lent H200 and H100 says so in each row, and default_model.md scores them all."""
    from pystencils_perf.measure.dataset import read_dataset

    data = ROOT / "validation" / "hopper" / "data"
    files = sorted(data.glob("*.csv")) + sorted((data / "h100").glob("*.csv"))
    measured = [f for f in files if not f.name.endswith("_raw.csv")]  # raw ncu pages are not data sets
    # H200: three kernels, their ncu runs and a rerun, then four kernels measured blind, each with a rerun, and the
    # Jacobi's 256-thread blocks, and D3Q19's streaming alone, with a rerun; H100: the first three less two ncu runs,
    # then the four blind ones and a box rerun, and D3Q19's streaming (a later lease); in a lease after that, the
    # streaming again, its ncu run, and the streaming of one, seven and 27 fields; then two streaming kernels measured
    # blind, each with a rerun, and the float one's ncu run; then a star of radius 2, timed and by ncu, blind; then
    # lbmpy's D3Q27 SRT, timed twice and by ncu, blind, on the H100 and then the H200; on 2026-11-27 (H100), the
    # Jacobi in blocks of 128 to 1024 threads (seven files, one rerun lost) and the star r=1 in 256-thread blocks,
    # twice, then both in blocks of 32 and 64 threads, twice; on an H200, the star in blocks of 32 threads
    assert len(measured) == 65
    for path in measured:
        rows = read_dataset(path).rows
        gpu = "NVIDIA H100 80GB HBM3" if path.parent.name == "h100" else "NVIDIA H200"
        assert {r.run["device"] for r in rows} == {gpu}, path
        assert all(
            r.run["driver"].startswith("CUDA driver 13.0") and r.run["date"][:10] in ("2026-11-26", "2026-11-27")
            for r in rows
        ), path
    table = (ROOT / "validation" / "default_model.md").read_text().split("## Held out")[1]
    for gpu in ("H200", "H100"):
        for kernel in ("star r=4", "star r=1", "D3Q19 SRT"):
            assert f"| {gpu} {kernel} | " in table
    for kernel in ("box r=1 (float)", "Jacobi 2D", "D3Q27 cumulant", "Allen-Cahn", "D3Q19 streaming"):
        assert f"| H200 {kernel} | " in table and f"| H100 {kernel} | " in table
    assert "| H100 D3Q27 SRT | " in table and "| H200 D3Q27 SRT | " in table
    for name in (
        "Jacobi 2D, 128-1024 threads",
        "star r=1, 256 threads",
        "star r=1, 32 threads",
        "star r=1, 64 threads",
        "Jacobi 2D, 32 threads",
        "Jacobi 2D, 64 threads",
    ):
        assert f"| H100 {name} | " in table
    assert "| H200 star r=1, 32 threads | " in table


def test_the_h100_convolution_cache_carries_its_provenance():
    """Our own Kernel Tuner cache of the convolution on a lent H100 says what ran it, when, and how it was timed; every
    timed configuration has Kernel Tuner's 32 runs and passed the check against the float64 reference."""
    from pystencils_perf.measure.kernel_tuner import load_cache_json

    folder = ROOT / "validation" / "hopper" / "data" / "h100"
    for name, runs in (
        ("convolution15_kernel_tuner_cache.json.gz", 32),
        ("convolution15_kernel_tuner_cache_rerun.json.gz", 10),
    ):
        cache = load_cache_json(folder / name)
        provenance = cache["provenance"]
        assert cache["device_name"] == provenance["device"] == "NVIDIA H100 80GB HBM3"
        assert provenance["driver"] == "580.159.04" and provenance["date_utc"].startswith("2026-11-26")
        timed = [e for e in cache["cache"].values() if isinstance(e["time"], float)]
        assert len(timed) > 1700 and all(len(e["times"]) == runs and e["relative_error"] < 1e-5 for e in timed)
        assert {e["time"] for e in cache["cache"].values() if e not in timed} <= {"RuntimeFailedConfig"}


def test_the_h200_convolution_caches_carry_their_provenance(tmp_path):
    """Our caches of the convolution on lent H200s (a sample of the shared-memory half, then the rest of that half,
    then the half without shared memory, each on its own lease) say what ran them and when; every timed launch passed
    the check against the float64 reference, and they merge into the whole space the tuner replays."""
    import sys

    sys.path.insert(0, str(ROOT / "validation" / "hopper"))
    from merge_caches import write_merged
    from pystencils_perf.measure.kernel_tuner import load_cache_json

    folder = ROOT / "validation" / "hopper" / "data" / "h200"
    parts = {}
    for name, day, least in (
        ("convolution15_shmem_kernel_tuner_cache", "2026-11-28", 260),
        ("shmem_rest/convolution15_shmem_rest_kernel_tuner_cache", "2026-11-30", 1700),
        ("global/convolution15_global_kernel_tuner_cache", "2026-11-30", 1700),
    ):
        for suffix, runs in (("", 32), ("_rerun", 10)):
            cache = load_cache_json(folder / f"{name}{suffix}.json.gz")
            provenance = cache["provenance"]
            assert cache["device_name"] == provenance["device"] == "NVIDIA H200"
            assert provenance["driver"] == "580.159.04" and provenance["date_utc"].startswith(day)
            timed = [e for e in cache["cache"].values() if isinstance(e["time"], float)]
            assert len(timed) > least and all(len(e["times"]) == runs and e["relative_error"] < 1e-5 for e in timed)
            assert {e["time"] for e in cache["cache"].values() if e not in timed} <= {
                "RuntimeFailedConfig",
                "CompilationFailedConfig",
            }
        parts[name] = load_cache_json(folder / f"{name}.json.gz")["cache"]
    assert write_merged(tmp_path / "whole.json.gz", [folder / f"{name}.json.gz" for name in parts]) == 4362
    whole = load_cache_json(tmp_path / "whole.json.gz")
    assert [p["date_utc"][:10] for p in whole["provenance"]["parts"]] == ["2026-11-28", "2026-11-30", "2026-11-30"]
    assert whole["cache"] == {k: v for part in parts.values() for k, v in part.items()}


def test_readme_shows_the_default_models_table_of_validation():
    """Issue 26: one table of the default model on every measured data set, in the README and in validation/,
    both written by validation/default_model.py (regenerating one and not the other fails here)."""
    mark = "<!-- default-model table -->"
    readme_table = README.read_text().split(mark)[1].strip()
    assert readme_table.startswith("| data set |")
    assert readme_table in (ROOT / "validation" / "default_model.md").read_text()
    names = [line.split("|")[1].strip() for line in readme_table.splitlines()[2:]]
    assert names == [
        "V100 star r=2",
        "A100 convolution",
        "A4000 convolution",
        "A6000 convolution",
        "RTX 2080 Ti KTT",
        "H100 convolution",
        "H200 convolution",
    ]


def _table_rows(markdown: str, heading: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table after `heading`, as header -> cell."""
    lines = markdown.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = list(itertools.takewhile(lambda line: line.startswith("|"), lines[start:]))
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))) for line in table[2:]]


def test_readme_held_out_summary_is_that_of_the_generated_tables():
    """The README's hand-written line on the held-out sets states what validation/default_model.md and
    validation/amd/report.md give (both regenerated by their scripts): it had kept an earlier stop's picks."""
    readme = " ".join(README.read_text().split())
    hopper = _table_rows((ROOT / "validation" / "default_model.md").read_text(), "## Held out: measured on a lent")
    picks = [float(row["pick"].rstrip(" %")) for row in hopper]
    stated = re.search(r"(\d+) Hopper stencil and LBM sets: picks (\d+)-(\d+) %, mean ([\d.]+) %", readme)
    assert stated, "the README names the held-out Hopper sets' picks"
    assert int(stated[1]) == len(picks)
    assert (int(stated[2]), int(stated[3])) == (round(min(picks)), round(max(picks)))
    assert float(stated[4]) == round(sum(picks) / len(picks), 1)
    amd = {
        row["data set"]: row
        for row in _table_rows((ROOT / "validation" / "amd" / "report.md").read_text(), "# The default model")
    }
    gpus = [amd[f"{gpu} convolution"] for gpu in ("MI250X", "W6600", "W7800")]
    expected = (
        "MI250X / W6600 / W7800 convolution: Spearman "
        + " / ".join(g["Spearman"] for g in gpus)
        + ", MAPE "
        + " / ".join(str(round(float(g["MAPE %"]))) for g in gpus)
        + " %, picks "
        + " / ".join(str(round(float(g["pick"].rstrip(" %")))) for g in gpus)
        + " %"
    )
    assert expected in readme


PACKAGE = ROOT / "pystencils_perf"
#: what a finding's measured number looks like on one line of a docstring: a speed, a run time, a speed ratio, a
#: time per candidate or call, or a model's error; a unit named without a number, a tolerance ("+-10 %") and
#: API documentation ("time in ms") are not
MEASURED_CLAIMS = {
    "time per candidate or call": re.compile(r"\b\d+(\.\d+)?\s*(ms|s) per (candidate|call|configuration)\b"),
    "measured number": re.compile(r"\bmeasured\b.*(?<!\+-)\b\d+(\.\d+)?\s*(GB/s|TB/s|GLup/s|MLup/s|%)"),
    "speed": re.compile(r"\b\d+(\.\d+)?\s*(GB/s|TB/s|GLup/s|MLup/s)"),
    "speed ratio": re.compile(r"\b\d+(\.\d+)?x (slower|faster)\b"),
    "run time": re.compile(r"\b(run|runs|ran|took|takes|measure|measures|measured)\b.*\b\d+(\.\d+)?\s*(ms|us|ns)\b"),
    "model error": re.compile(r"\b(MAPE|Spearman)\b.*\b\d+(\.\d+)?\s*(%|->)"),
}

#: a path into the repository's validation/ folder; the docs pages under docs/validation/ are fine
INTO_VALIDATION = re.compile(r"(?<!docs/)\bvalidation/")


def _package_docstrings():
    """(path, line, what, text) of every docstring in the package: module, class and function docstrings, read with
    `ast` (nothing is imported), and the ``#:`` comments that Sphinx renders as the docs of a name."""
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source, str(path))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc is not None:
                    yield path.relative_to(ROOT), node.body[0].lineno, type(node).__name__, doc
        comments = [
            (number, line.strip()[2:])
            for number, line in enumerate(source.splitlines(), 1)
            if line.strip().startswith("#:")
        ]
        for _, group in itertools.groupby(enumerate(comments), lambda item: item[1][0] - item[0]):
            group = [comment for _, comment in group]
            yield path.relative_to(ROOT), group[0][0], "#:", "\n".join(text for _, text in group)


def test_package_docstrings_are_short_and_hold_no_findings():
    """Item 3 of issue 57: a module docstring says what the module is for in a few lines, and no docstring holds
    a finding's measured numbers or refers into validation/: those live in docs/model/ and validation/, where
    the docs build and the validation scripts check them."""
    problems = []
    for path, line, what, doc in _package_docstrings():
        lines = len(doc.strip().splitlines())
        if what == "Module" and lines > 12:
            problems.append(f"{path}:{line}: a module docstring of {lines} lines (at most 12)")
        if INTO_VALIDATION.search(doc):
            problems.append(f"{path}:{line}: a {what} docstring refers into validation/")
        for offset, text in enumerate(doc.splitlines()):
            claims = [name for name, claim in MEASURED_CLAIMS.items() if claim.search(text)]
            if claims:
                problems.append(f"{path}:{line + offset}: a {what} docstring holds a {claims[0]}: {text.strip()}")
    assert not problems, "\n".join(problems)


def test_ci_lints_and_checks_the_format_with_the_pinned_ruff():
    """Issue 57, item 3: no formatter or linter was configured; CI runs ruff, whose version the test extra pins."""
    import tomllib

    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^ruff check \.$", ci, re.M) and re.search(r"^ruff format --check \.$", ci, re.M)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(re.fullmatch(r"ruff==[\d.]+", d) for d in project["project"]["optional-dependencies"]["test"])
    assert project["tool"]["ruff"]["line-length"] == 120


def test_every_autodoc_target_in_the_docs_imports():
    """A module split left `.. autodata:: pystencils_perf.rank.TIE_BREAK` pointing where the name no longer is;
    only the (slow) Sphinx build saw it."""
    import importlib

    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts]
    targets = {t for p in pages for t in re.findall(r"^\s*\.\. auto\w+:: (pystencils_perf[\w.]*)", p.read_text(), re.M)}
    assert targets
    for target in sorted(targets):
        parts = target.split(".")
        for split in range(len(parts), 0, -1):  # the longest prefix that is a module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            for name in parts[split:]:
                assert hasattr(obj, name), f"{target}: {'.'.join(parts[:split])} has no {name}"
                obj = getattr(obj, name)
            break
        else:
            raise AssertionError(f"{target}: no module")


def test_the_plugins_page_names_every_hook():
    """The page lists the hooks in its first paragraph; a new hook (perf_resources_unavailable) was left out."""
    from pystencils_perf import hookspecs

    hooks = {name for name in dir(hookspecs) if name.startswith("perf_")}
    page = (DOCS / "plugins" / "index.md").read_text()
    assert hooks and not {h for h in hooks if f"`{h}`" not in page}
