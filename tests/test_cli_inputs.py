"""Bad command-line input is one line and exit 2, found before anything is computed; --head, --version, best line."""

import io
import json
import os
import re
import stat
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from pystencils_perf.cli import main
from pystencils_perf.hookspecs import hookimpl

ROOT = Path(__file__).resolve().parent.parent
V100_DATA = ROOT / "validation/data/v100/v100_star3d_r2_1024_folding.csv"

#: a SPEC that leaves a trace when it is run: generating its kernel is where computing starts
TRACED_SPEC = """
from pathlib import Path
Path(__file__).with_suffix(".ran").touch()
from pystencils_perf.catalog import jacobi_2d
kernel = jacobi_2d((64, 64))
"""

#: 2D Jacobi on fixed-size fields: the SPEC form whose `assignments` create_kernel takes
JACOBI_ASSIGNMENTS = """
import pystencils as ps
src, dst = ps.fields("src, dst: double[66, 66]")
assignments = [ps.Assignment(dst[0, 0], (src[1, 0] + src[-1, 0] + src[0, 1] + src[0, -1]) / 4)]
"""


@pytest.fixture
def traced_spec(tmp_path):
    spec = tmp_path / "traced.py"
    spec.write_text(TRACED_SPEC)
    return spec


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("pystencils-perf: error: ") and "\n" not in err, err
    return err


def _output_cases(tmp_path):
    """(options, what the message must name) for outputs that cannot be written."""
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("")
    a_folder = tmp_path / "a_folder"
    a_folder.mkdir()
    missing = tmp_path / "missing"
    return [
        (["--json", str(missing / "r.json")], f"folder {missing} does not exist"),
        (["--csv", str(missing / "r.csv")], f"folder {missing} does not exist"),
        (["--json", str(a_file / "r.json")], f"{a_file} is not a folder"),
        (["--csv", str(a_folder)], f"{a_folder} is a folder"),
    ]


@pytest.mark.parametrize("case", range(4))
def test_rank_output_checked_before_computing(capsys, tmp_path, traced_spec, case):
    options, message = _output_cases(tmp_path)[case]
    assert main(["rank", str(traced_spec), "--device", "V100", *options]) == 2
    assert message in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (
            ["--domain", "64xa"],
            "argument --domain: domain '64xa' is not of the form AxBxC (one to three positive integers, e.g. 64x64x64)",
        ),
        (["--domain", "64x0"], "argument --domain: domain '64x0' is not of the form"),
        (
            ["--domain", f"{2**70}x64"],
            f"argument --domain: domain '{2**70}x64' has {2**70} points along an axis, "
            "more than the 9223372036854775807 (2**63 - 1) a GPU kernel's 64-bit index holds",
        ),
        (["--threads", "0"], "argument --threads: must be a positive integer, got '0'"),
        (["--threads", "-32"], "argument --threads: must be a positive integer, got '-32'"),
        (["--head", "-3"], "argument --head: must be a positive integer, got '-3'"),
        (["--head", "three"], "argument --head: must be a positive integer, got 'three'"),
        (
            ["--blocks", "32x32"],
            "argument --blocks: block '32x32' is not of the form AxBxC with three positive integers",
        ),
        (["--blocks", "32x2x16,8x8"], "argument --blocks: block '8x8' is not of the form AxBxC"),
        (["--blocks", "-32x1x1"], "argument --blocks: block '-32x1x1' is not of the form AxBxC"),
        (["--fold", "1x2"], "argument --fold: fold '1x2' is not of the form AxBxC with three positive integers"),
        (["--fold", "-1x1x2"], "argument --fold: fold '-1x1x2' is not of the form AxBxC"),
        (["--blocks", ","], "argument --blocks: no block given"),
        (["--backend", "gpu"], "argument --backend: invalid choice: 'gpu'"),
    ],
)
def test_rank_bad_option_is_one_line_before_computing(capsys, traced_spec, argv_tail, message):
    assert main(["rank", str(traced_spec), "--device", "V100", *argv_tail]) == 2
    assert message in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def test_missing_required_option_is_one_line(capsys, traced_spec):
    assert main(["rank", str(traced_spec)]) == 2
    assert "the following arguments are required: --device" in one_line_error(capsys)


def test_validate_out_onto_a_file(capsys, tmp_path, traced_spec):
    a_file = tmp_path / "report.md"
    a_file.write_text("")
    argv = ["validate", str(V100_DATA), "--device", "V100", "--spec", str(traced_spec), "--out", str(a_file)]
    assert main(argv) == 2
    assert f"argument --out: {a_file} is a file, not a folder" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def test_validate_out_below_a_file(capsys, tmp_path, traced_spec):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    argv = ["validate", str(V100_DATA), "--device", "V100", "--spec", str(traced_spec), "--out", str(a_file / "report")]
    assert main(argv) == 2
    assert f"argument --out: {a_file} is not a folder" in one_line_error(capsys)


def test_calibrate_out_into_a_missing_folder(capsys, tmp_path, traced_spec):
    out = tmp_path / "missing" / "v100.toml"
    argv = ["calibrate", str(V100_DATA), "--device", "V100", "--spec", str(traced_spec), "--out", str(out)]
    assert main(argv) == 2
    assert f"argument --out: folder {out.parent} does not exist" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def test_measure_out_is_checked_before_the_gpu(capsys, tmp_path, traced_spec):
    """A wrong --out is the user's to fix on any machine, so it is named before the missing cupy or GPU."""
    out = tmp_path / "missing" / "h100.csv"
    assert main(["measure", str(traced_spec), "--device", "H100", "--out", str(out)]) == 2
    assert f"argument --out: folder {out.parent} does not exist" in one_line_error(capsys)


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pystencils-perf {version('pystencils-perf')}"


def _rank_jacobi(tmp_path, capsys, *options):
    spec = tmp_path / "jacobi.py"
    spec.write_text(JACOBI_ASSIGNMENTS)
    out_json = tmp_path / "ranking.json"
    assert main(["rank", str(spec), "--device", "V100", "--json", str(out_json), *options]) == 0
    return spec, capsys.readouterr().out, json.loads(out_json.read_text())


def test_head_limits_candidates_and_rejected(tmp_path, capsys):
    _, out, ranking = _rank_jacobi(tmp_path, capsys, "--head", "2")
    rejected = len(ranking["rejected"])
    assert rejected > 2  # 1024-thread blocks wider than 64 points in x or y
    assert f" candidates, {rejected} rejected\n" in out  # the first line counts them all
    rows = re.findall(r"^[=> ] *\d+ +\d+x\d+x\d+ ", out, re.M)
    assert len(rows) == 2 + (ranking["candidates"].index(_selected(ranking)) >= 2)  # and the pick's row
    assert f"  ... {len(ranking['candidates']) - 2} more\n" in out
    assert len(re.findall(r"^  rejected ", out, re.M)) == 2
    assert f"  ... {rejected - 2} more rejected\n" in out


def _selected(ranking: dict) -> dict:
    """The candidate of a ranking's JSON that select() took."""
    return next(
        c
        for c in ranking["candidates"]
        if [c["block"], c["fold"]] == [ranking["selected"]["block"], ranking["selected"]["fold"]]
    )


class _PickTheSlowest:
    @hookimpl(tryfirst=True)
    def perf_select(self, ranking):
        return ranking.candidates[-1]


def test_head_shows_the_picks_row_wherever_it_ranks(tmp_path, capsys):
    """The pick's row, marked >, after the first N, with its rank; its throughput is in the line explaining >."""
    import pystencils_perf as pp

    plugin = pp.get_plugin_manager().register(_PickTheSlowest())
    try:
        _, out, ranking = _rank_jacobi(tmp_path, capsys, "--head", "2")
    finally:
        pp.get_plugin_manager().unregister(name=plugin)
    last, pick = len(ranking["candidates"]), _selected(ranking)
    assert ranking["candidates"][-1] == pick
    lines = out.splitlines()
    more = lines.index(f"  ... {last - 2} more")
    assert re.match(
        rf"^> *{last} +{'x'.join(map(str, pick['block']))} +{'x'.join(map(str, pick['fold']))} "
        rf"+{pick['glups']:.2f} ",
        lines[more + 1],
    )
    assert sum(line.startswith(">") for line in lines) == 1
    assert lines[more + 2].startswith(
        f"  > {'x'.join(map(str, pick['block']))} f{'x'.join(map(str, pick['fold']))}, "
        f"the pick: {pick['glups']:.2f} GLup/s predicted; "
    )


BEST = re.compile(
    r"^best: pystencils_perf\.create_kernel\(assignments, device='V100', "
    r"blocks=\[\((\d+), (\d+), (\d+)\)\], folds=\[\((\d+), (\d+), (\d+)\)\]\)$",
    re.M,
)


def test_best_line_names_the_ranked_best(tmp_path, capsys):
    _, out, ranking = _rank_jacobi(tmp_path, capsys, "--head", "3")
    (best,) = BEST.findall(out)
    selected = ranking["selected"]  # the best, or among candidates tied with it the one the tie-break takes
    assert [int(v) for v in best] == selected["block"] + selected["fold"]


@pytest.mark.slow
def test_best_line_call_applies_the_best(tmp_path, capsys):
    """Running the printed call on the SPEC's assignments generates a kernel with the best block and fold."""
    import runpy

    import pystencils_perf

    spec, out, ranking = _rank_jacobi(tmp_path, capsys, "--fold", "1x1x1,1x2x1")
    call = next(line for line in out.splitlines() if line.startswith("best: ")).removeprefix("best: ")
    namespace = {"pystencils_perf": pystencils_perf, "assignments": runpy.run_path(str(spec))["assignments"]}
    kernel = eval(call, namespace)
    chosen = kernel.metadata["pystencils_perf"].chosen.launch
    selected = ranking["selected"]
    assert [list(chosen.block), list(chosen.fold)] == [selected["block"], selected["fold"]]
    block, _ = kernel.get_launch_configuration().evaluate()
    assert list(block) == selected["block"]


def _written_outside(tmp_path, *args) -> list[str]:
    """Run Python with `args` where home and temporary directory are empty folders and no PYSTENCILS_CACHE_DIR is
    set (pystencils' cache would go to ~/.cache/pystencils); what is left in those folders afterwards."""
    import os
    import subprocess
    import sys

    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYSTENCILS_CACHE_DIR", "MPLCONFIGDIR")}
    env.update(HOME=str(home), TMPDIR=str(temp))
    result = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p not in (home, temp))


@pytest.mark.slow
@pytest.mark.parametrize("script", ["quickstart.py"])
def test_example_writes_nothing_into_home_or_the_temporary_directory(tmp_path, script):
    """The example puts pystencils' cache into a temporary folder it removes."""
    assert _written_outside(tmp_path, str(ROOT / "examples" / script)) == []


@pytest.mark.parametrize("command", [["--help"], ["devices", "V100"]])
def test_the_command_line_writes_nothing_into_home(tmp_path, command):
    """Loading the plugins imports pystencils: the command line points its cache at a temporary folder first."""
    assert _written_outside(tmp_path, "-m", "pystencils_perf.cli", *command) == []


def test_measure_without_cupy_names_an_installable_package(capsys, tmp_path, traced_spec, monkeypatch):
    """pystencils-perf is on no package index: the hint names cupy's own package, or the extra of a checkout."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError, as where it is not installed
    assert main(["measure", str(traced_spec), "--device", "H100", "--out", str(tmp_path / "h100.csv")]) == 2
    err = one_line_error(capsys)
    assert "pip install cupy-cuda12x" in err and "pip install -e '.[gpu]' in a pystencils-perf checkout" in err
    assert "pystencils-perf[gpu]" not in err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_rank_output_where_no_file_can_be_created(capsys, traced_spec, option):
    """/proc exists and is a folder, but takes no new file: found before the SPEC runs, not after the ranking."""
    assert main(["rank", str(traced_spec), "--device", "V100", option, "/proc/out.json"]) == 2
    assert f"argument {option}: cannot create files in /proc" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_validate_out_where_no_folder_can_be_created(capsys, traced_spec):
    argv = ["validate", str(V100_DATA), "--device", "V100", "--spec", str(traced_spec), "--out", "/proc/report/v100"]
    assert main(argv) == 2
    assert "argument --out: cannot create files in /proc" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def test_the_same_output_twice_is_refused(capsys, tmp_path, traced_spec):
    same = tmp_path / "same.out"
    assert main(["rank", str(traced_spec), "--device", "V100", "--json", str(same), "--csv", str(same)]) == 2
    assert f"--csv {same} is also --json's file" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists() and not same.exists()


def test_an_output_onto_an_input_is_refused(capsys, traced_spec):
    assert main(["rank", str(traced_spec), "--device", "V100", "--csv", str(traced_spec)]) == 2
    assert f"--csv {traced_spec} is the SPEC: writing it would replace an input" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def test_an_input_given_twice_fails_as_what_it_is(capsys, traced_spec):
    """Only outputs can replace an input: the SPEC as --device is read as a device file, and fails as one."""
    assert main(["rank", str(traced_spec), "--device", str(traced_spec)]) == 2
    assert f"device file {traced_spec} is not valid TOML" in one_line_error(capsys)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_outputs_into_a_pipe(tmp_path):
    """A special file (a pipe, /dev/stdout) is written to, not replaced by a regular file."""
    import threading

    spec, pipe = tmp_path / "jacobi.py", tmp_path / "pipe"
    spec.write_text(JACOBI_ASSIGNMENTS)
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    assert main(["rank", str(spec), "--device", "V100", "--csv", str(pipe)]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert received[0].startswith("rank,bx,by,bz,fx,fy,fz,glups")


def test_unknown_plugin_to_block_names_the_installed(capsys, traced_spec):
    assert main(["--block-plugin", "nosuch", "rank", str(traced_spec), "--device", "V100"]) == 2
    err = one_line_error(capsys)
    assert "--block-plugin nosuch: no installed plugin has that name; installed: " in err
    assert "pystencils" in err.split("installed: ")[1].split(", ")
    assert not traced_spec.with_suffix(".ran").exists()


def test_a_blocked_adapter_is_named(capsys, tmp_path, monkeypatch):
    from pystencils_perf.plugins import BLOCK_ENV

    monkeypatch.setenv(BLOCK_ENV, "")  # main adds --block-plugin's names to it; monkeypatch restores it
    spec = tmp_path / "jacobi.py"
    spec.write_text(JACOBI_ASSIGNMENTS)
    assert main(["--block-plugin", "pystencils", "rank", str(spec), "--device", "V100"]) == 2
    assert "the adapter plugin pystencils is blocked (--block-plugin or PYSTENCILS_PERF_BLOCK)" in one_line_error(
        capsys
    )


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "Compressed file ended before the end-of-stream marker was reached"),  # the first 300 bytes of a cache
        (b"\x1f\x8b" + bytes(range(256)), "cannot read Kernel Tuner file"),
    ],
)
def test_broken_kernel_tuner_cache_is_one_line(capsys, tmp_path, traced_spec, content, message):
    cache = ROOT / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
    broken = tmp_path / "cache.json.gz"
    broken.write_bytes(cache.read_bytes()[:300] if content is None else content)
    assert main(["validate", str(broken), "--device", "A4000", "--spec", str(traced_spec)]) == 2
    err = one_line_error(capsys)
    assert str(broken) in err and message in err


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("cache.json", b"\xff\xfe{}", "is not a Kernel Tuner cache (not UTF-8 text"),
        ("data.csv", b"bx,by\n\xc3\x28", "is not CSV text"),
        ("tuner.csv", b"block_size_x,time\n32,\xff\n", "is not CSV text"),
    ],
)
def test_data_that_is_not_text_is_one_line(capsys, tmp_path, traced_spec, name, content, message):
    data = tmp_path / name
    data.write_bytes(content)
    assert main(["validate", str(data), "--device", "V100", "--spec", str(traced_spec)]) == 2
    assert f"{data} {message}" in one_line_error(capsys)


def test_data_that_is_a_folder_is_one_line(capsys, tmp_path, traced_spec):
    folder = tmp_path / "data.csv"
    folder.mkdir()
    assert main(["validate", str(folder), "--device", "V100", "--spec", str(traced_spec)]) == 2
    assert f"cannot read data file {folder}: Is a directory" in one_line_error(capsys)


@pytest.mark.parametrize("command", ["validate", "calibrate"])
def test_an_empty_data_path_is_named(capsys, traced_spec, command):
    assert main([command, "", "--device", "V100", "--spec", str(traced_spec)]) == 2
    assert "argument data: the path is empty" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


def main_interrupted(argv) -> int:
    """`main`'s status, a test failure where the KeyboardInterrupt escapes it (it would stop pytest)."""
    try:
        return main(argv)
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped main")


@pytest.mark.parametrize("command", ["rank", "validate"])
def test_ctrl_c_is_one_line(capsys, monkeypatch, tmp_path, command):
    """Ctrl-C while ranking (in islpy, say) ends with one line and status 130, not Python's traceback."""
    from importlib import import_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    for module in ("pystencils_perf.rank", "pystencils_perf.validate"):  # the package's `rank` is the function
        monkeypatch.setattr(import_module(module), "rank", interrupted)
    spec = tmp_path / "jacobi.py"
    spec.write_text(JACOBI_ASSIGNMENTS)
    argv = {
        "rank": ["rank", str(spec), "--device", "V100", "--backend", "isl"],
        "validate": ["validate", str(V100_DATA), "--device", "V100", "--spec", str(spec)],
    }[command]
    assert main_interrupted(argv) == 130
    err = capsys.readouterr().err  # after the isl backend's note on its cost
    assert err.splitlines()[-1] == "pystencils-perf: interrupted" and "Traceback" not in err


def test_ctrl_c_keeps_the_outputs_written_whole(capsys, monkeypatch, tmp_path):
    """Interrupted between --json and --csv: the JSON is complete, the CSV as it was, nothing half-written beside."""
    from pystencils_perf.ranking import Ranking

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Ranking, "to_csv", interrupted)
    spec = tmp_path / "jacobi.py"
    spec.write_text(JACOBI_ASSIGNMENTS)
    out_json, out_csv = tmp_path / "ranking.json", tmp_path / "ranking.csv"
    out_csv.write_text("the previous ranking\n")
    assert (
        main_interrupted(["rank", str(spec), "--device", "V100", "--json", str(out_json), "--csv", str(out_csv)]) == 130
    )
    assert json.loads(out_json.read_text())["selected"]
    assert out_csv.read_text() == "the previous ranking\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jacobi.py", "ranking.csv", "ranking.json"]


@pytest.mark.parametrize(
    "source, message",
    [
        # pystencils' `assert FieldType.is_custom(self)`: the bare AssertionError said nothing
        (
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[8, 8]')\n"
            "assignments = [ps.Assignment(dst[0, 0], src.absolute_access((1, 2), ()))]\n",
            "failed at line 3: AssertionError in absolute_access (field.py: assert FieldType.is_custom(self))",
        ),
        ("import sys\nsys.exit(3)\n", "failed at line 2: SystemExit: 3"),  # used to end pystencils-perf silently
        (
            "from pystencils_perf.catalog import jacobi_2d\nkernel = jacobi_2d((64, 64))\ndomain_shape = 64\n",
            "domain shape 64 is not one to three positive integers",
        ),
        (
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[8, 8]')\n"
            "kernel = ps.create_kernel([ps.Assignment(dst[0, 0], src[1, 0])], ps.CreateKernelConfig(target=ps.Target.CPU))\n",
            "kernel 'kernel' was generated for Target.CPU, not a GPU",
        ),  # not the private Target._CPU
        (
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[2, 2, 2]')\n"
            "assignments = [ps.Assignment(dst[0, 0, 0], src[1, 0, 0] + src[-1, 0, 0])]\n",
            "kernel 'kernel' updates no point: its interior is empty ('dst' of shape (2, 2, 2), 'src' of shape (2, 2, 2)",
        ),
        (
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[32, 32, 32]')\nk = ps.TypedSymbol('k', 'int64')\n"
            "assignments = [ps.Assignment(dst[0, 0, 0], src[k, 0, 0])]\n",
            "access src[k, 0, 0] in the assignment to dst[0,0,0] has a non-constant offset (k)",
        ),
        ("assignments = []\n", "the kernel is empty: [] holds no assignments"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_problem(capsys, tmp_path, source, message):
    spec = tmp_path / "spec.py"
    spec.write_text(source)
    assert main(["rank", str(spec), "--device", "V100"]) == 2
    assert message in one_line_error(capsys)


def test_a_spec_that_is_a_folder(capsys, tmp_path):
    assert main(["rank", str(tmp_path), "--device", "V100"]) == 2
    assert f"SPEC file {tmp_path} is a folder, not a file" in one_line_error(capsys)


def test_a_domain_for_fixed_size_fields_is_refused(capsys, traced_spec):
    assert main(["rank", str(traced_spec), "--device", "V100", "--domain", "1000x1000"]) == 2
    assert "has the fixed shape (66, 66): the domain shape (1000, 1000) does not apply to it" in one_line_error(capsys)


def test_a_misspelt_device_gets_a_suggestion(capsys, traced_spec):
    assert main(["rank", str(traced_spec), "--device", "H10"]) == 2
    assert "unknown device 'H10'; did you mean H100 (H100-SXM5-80GB)?" in one_line_error(capsys)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stderr, shown", [(_Terminal, True), (io.StringIO, False)])
def test_progress_bar_only_on_a_terminal(monkeypatch, stderr, shown):
    """tqdm on a terminal, from 0 of N on; nothing in a log or a pipe."""
    from pystencils_perf.cli import _progress

    monkeypatch.setattr(sys, "stderr", stderr())
    assert list(_progress(("a", "b", "c"))) == ["a", "b", "c"]
    assert ("0/3 [00:00<?" in sys.stderr.getvalue()) == shown and (sys.stderr.getvalue() != "") == shown


def test_tracesim_predictions_advance_the_progress(monkeypatch):
    """The simulation (seconds per candidate) runs between two steps of `progress`, once per candidate."""
    plugin = pytest.importorskip("pystencils_perf_tracesim.plugin")
    import pystencils_perf as pp

    events = []
    simulate = plugin.simulate

    def recorded_simulate(model, launch, device):
        events.append("simulate")
        return simulate(model, launch, device)

    def progress(items):
        for item in items:
            events.append("step")
            yield item

    monkeypatch.setattr(plugin, "simulate", recorded_simulate)
    spec = JACOBI_ASSIGNMENTS.replace("66, 66", "34, 34")
    namespace: dict = {}
    exec(spec, namespace)
    ranking = pp.rank(
        namespace["assignments"],
        "V100",
        model="tracesim",
        blocks="32x4x1,16x8x1",
        folds="1x1x1",
        compile_resources=False,
        progress=progress,
    )
    assert events == ["step", "simulate"] * len(ranking.candidates) and len(ranking.candidates) == 2


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`pystencils-perf rank ... | head -1`: the reader is gone before the table is written; no traceback."""
    import subprocess

    spec = tmp_path / "jacobi.py"
    spec.write_text(JACOBI_ASSIGNMENTS)
    env = {**os.environ, "PYSTENCILS_CACHE_DIR": str(tmp_path / "cache")}
    child = subprocess.Popen(
        [sys.executable, "-m", "pystencils_perf.cli", "rank", str(spec), "--device", "V100", "--head", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=300) == 141 and err == ""


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["--model", ""], "argument --model: no performance model given"),
        (
            ["--model", "limiters,throughput"],
            "argument --model: give one performance model, not 2 (limiters, throughput)",
        ),
        (["--prune", " , "], "argument --prune: no candidate filter given"),
        (["--device", "/"], "device '/' is a folder, not a device name or .toml file"),
    ],
)
def test_rank_empty_or_extra_names_are_one_line(capsys, traced_spec, argv_tail, message):
    argv = ["rank", str(traced_spec), *(["--device", "V100"] if "--device" not in argv_tail else []), *argv_tail]
    assert main(argv) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["devices", ""], "the device name is empty: give a library name or alias"),
        (["devices", "--template", ""], "devices --template: the path is empty; give a new file name"),
    ],
)
def test_devices_with_an_empty_name_or_template_is_one_line(capsys, argv, message):
    assert main(argv) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["--repeats", "2"], "argument --repeats: must be an integer of at least 7, got '2'"),
        (["--warmup", "-1"], "argument --warmup: must be a non-negative integer, got '-1'"),
    ],
)
def test_measure_counts_are_checked_before_the_gpu(capsys, tmp_path, traced_spec, argv_tail, message):
    assert main(["measure", str(traced_spec), "--device", "H100", "--out", str(tmp_path / "m.csv"), *argv_tail]) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize("name", ["estimator", "select"])
@pytest.mark.parametrize("where", ["option", "environment"])
def test_a_core_plugin_cannot_be_blocked(capsys, traced_spec, monkeypatch, name, where):
    """Blocking the estimator or the selection left a ranking that failed with a traceback deep inside."""
    from pystencils_perf.plugins import BLOCK_ENV

    monkeypatch.setenv(BLOCK_ENV, name if where == "environment" else "")
    argv = ["--block-plugin", name] if where == "option" else []
    assert main([*argv, "rank", str(traced_spec), "--device", "V100"]) == 2
    assert f"{name}: a core plugin cannot be blocked" in one_line_error(capsys)


def test_a_misspelt_plugin_in_the_environment_is_refused(capsys, traced_spec, monkeypatch):
    from pystencils_perf.plugins import BLOCK_ENV

    monkeypatch.setenv(BLOCK_ENV, "nosuch")
    assert main(["rank", str(traced_spec), "--device", "V100"]) == 2
    assert f"{BLOCK_ENV}: nosuch: no installed plugin has that name" in one_line_error(capsys)


def test_fields_of_four_spatial_dimensions_are_one_line(capsys, tmp_path):
    spec = tmp_path / "four.py"
    spec.write_text(
        'import pystencils as ps\nsrc, dst = ps.fields("src, dst: double[8, 8, 8, 4]")\n'
        "assignments = [ps.Assignment(dst[0, 0, 0, 0], src[1, 0, 0, 0] + src[-1, 0, 0, 0])]\n"
    )
    for command in (["rank", str(spec), "--device", "V100"], ["accesses", str(spec)]):
        assert main(command) == 2
        assert "field 'dst' has 4 spatial dimensions: a GPU kernel's threads span at most 3" in one_line_error(capsys)


@pytest.mark.parametrize("kind", ["device", "spec"])
def test_a_toml_file_that_is_not_utf8_is_one_line(capsys, tmp_path, kind):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'\xff\xfe name = "x"\n')
    argv = (
        ["rank", str(ROOT / "examples/star3d_r4.py"), "--device", str(bad)]
        if kind == "device"
        else ["rank", str(bad), "--device", "V100"]
    )
    assert main(argv) == 2
    assert f"{bad}" in (err := one_line_error(capsys)) and "not UTF-8 text (byte 0: invalid start byte)" in err


def test_a_json_output_onto_a_full_device_is_one_line(capsys, traced_spec):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    assert main(["rank", str(traced_spec), "--device", "V100", "--json", "/dev/full"]) == 2
    assert "cannot write to /dev/full (No space left on device)" in capsys.readouterr().err


A4000_CACHE = ROOT / "validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz"
TILE1X1_SPEC = ROOT / "validation/a100_convolution/convolution_tile1x1.py"


@pytest.mark.parametrize(
    "replay, message", [("folder", "is a folder, not a file"), ("/dev/null", "is not a regular file")]
)
def test_a_replay_that_is_no_regular_file_says_what_it_is(capsys, tmp_path, replay, message):
    path = tmp_path / "cache.json" if replay == "folder" else Path(replay)
    if replay == "folder":
        path.mkdir()
    assert main(["tune", str(TILE1X1_SPEC), "--device", "RTX-A4000", "--replay", str(path)]) == 2
    assert f"argument --replay: {path} {message}" in one_line_error(capsys)


@pytest.mark.parametrize("where", ["a file", "below /proc"])
def test_a_tuning_folder_that_cannot_hold_records_is_one_line_before_ranking(capsys, tmp_path, monkeypatch, where):
    folder = tmp_path / "a_file" if where == "a file" else Path("/proc/no-such-folder")
    if where == "a file":
        folder.write_text("")
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(folder))
    assert (
        main(["tune", str(TILE1X1_SPEC), "--device", "RTX-A4000", "--replay", str(A4000_CACHE), "--budget", "2"]) == 2
    )
    assert f"PYSTENCILS_PERF_TUNING_DIR={folder}: cannot create the tuning record folder" in one_line_error(capsys)


def test_a_pystencils_cache_that_cannot_be_created_is_one_line(capsys, tmp_path, monkeypatch, traced_spec):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("PYSTENCILS_CACHE_DIR", str(blocker / "cache"))
    assert main(["rank", str(traced_spec), "--device", "V100"]) == 2
    assert f"PYSTENCILS_CACHE_DIR={blocker / 'cache'}: cannot create pystencils' cache folder" in one_line_error(capsys)
    assert not traced_spec.with_suffix(".ran").exists()


@pytest.mark.parametrize(
    "line, message",
    [
        ("fixed_parameters = 5", "fixed_parameters = 5 is not a dict of parameter names to values"),
        ("block_parameters = 'bx'", "block_parameters = 'bx' is not a sequence of parameter names"),
        ("lattice_updates = True", "lattice_updates = True is not a positive integer"),
    ],
)
def test_a_tuning_spec_with_a_malformed_value_is_one_line(capsys, tmp_path, monkeypatch, line, message):
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(tmp_path / "records"))
    spec = tmp_path / "spec.py"
    spec.write_text(f"def kernel_for(params):\n    raise AssertionError\nlattice_updates = 100\n{line}\n")
    assert main(["tune", str(spec), "--device", "RTX-A4000", "--replay", str(A4000_CACHE), "--budget", "2"]) == 2
    assert message in one_line_error(capsys)


def test_an_output_path_that_ends_in_a_slash_is_a_folder(capsys, tmp_path, traced_spec):
    """`--csv newdir/` wrote a file named newdir."""
    assert main(["rank", str(traced_spec), "--device", "V100", "--csv", f"{tmp_path / 'newdir'}/"]) == 2
    assert f"{tmp_path / 'newdir'}/ is a folder, not a file" in one_line_error(capsys)
    assert not (tmp_path / "newdir").exists() and not traced_spec.with_suffix(".ran").exists()


def test_the_best_line_of_a_kernel_pystencils_did_not_generate_names_the_launch(capsys, tmp_path):
    """A hand-written CUDA description cannot go through `pystencils_perf.create_kernel`."""
    spec = tmp_path / "copy.py"
    spec.write_text(
        "from pystencils_perf_cuda import Array, CudaKernel\n"
        'kernel = CudaKernel(name="copy", arrays=(Array("a", "float", (1 << 20,)), '
        'Array("b", "float", (1 << 20,))), threads=(1 << 20,), '
        'indices={"x": "blockIdx.x * blockDim.x + threadIdx.x"}, loads=("a[x]",), stores=("b[x]",))\n'
    )
    assert main(["rank", str(spec), "--device", "V100", "--blocks", "128x1x1,256x1x1"]) == 0
    best = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("best: "))
    assert re.fullmatch(r"best: blocks of (128|256)x1x1 threads", best), best


def test_threads_and_explicit_blocks_together_are_refused():
    import pystencils_perf as pp
    from pystencils_perf.catalog import star_3d

    with pytest.raises(pp.ConfigurationError, match="give threads .* or explicit blocks, not both"):
        pp.rank(star_3d(1, (32, 32, 32)), "V100", threads=64, blocks=[(32, 4, 1)])


# -- issue 58, item 5: each message names the real problem -------------------------------------------------

CONVOLUTION_SPEC = ROOT / "validation/a100_convolution/convolution.py"


def test_an_empty_device_name_is_named(capsys, traced_spec):
    assert main(["rank", str(traced_spec), "--device", ""]) == 2
    assert "the device name is empty" in one_line_error(capsys)


@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_an_empty_output_path_is_named(capsys, traced_spec, option):
    assert main(["rank", str(traced_spec), "--device", "V100", option, ""]) == 2
    assert f"argument {option}: the path is empty" in one_line_error(capsys)


@pytest.mark.parametrize(
    "path, message",
    [
        ("", "the SPEC file's path is empty"),
        ("/dev/null", "SPEC file /dev/null is not a regular file"),
        ("missing.py", "SPEC file missing.py does not exist"),
    ],
)
def test_a_spec_path_that_names_no_file_says_what_it_names(capsys, path, message):
    assert main(["rank", path, "--device", "V100"]) == 2
    assert message in one_line_error(capsys)


def test_a_spec_whose_kernel_is_none_says_so(capsys, tmp_path):
    """`assignments` and ``kernel = None``: the None is named, not a missing definition."""
    spec = tmp_path / "spec.py"
    spec.write_text(JACOBI_ASSIGNMENTS + "kernel = None\n")
    assert main(["rank", str(spec), "--device", "V100"]) == 2
    assert f"SPEC file {spec} sets `kernel` to None" in one_line_error(capsys)


@pytest.mark.parametrize("threads", [str(2**62), "2048"])
def test_threads_beyond_the_devices_limit_are_named(capsys, traced_spec, threads):
    assert main(["rank", str(traced_spec), "--device", "V100", "--threads", threads]) == 2
    assert f"argument --threads: {threads} exceeds V100-PCIe-32GB's limit of 1024 threads per block" in one_line_error(
        capsys
    )
    assert not traced_spec.with_suffix(".ran").exists()


@pytest.mark.parametrize("command", ["validate", "tune"])
def test_a_kernel_tuner_cache_without_rows_says_so(capsys, tmp_path, monkeypatch, command):
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(tmp_path / "records"))
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"device_name": "NVIDIA A100-PCIE-40GB", "cache": {}}))
    argv = {
        "validate": ["validate", str(empty), "--device", "A100", "--spec", str(CONVOLUTION_SPEC)],
        "tune": ["tune", str(CONVOLUTION_SPEC), "--device", "A100", "--replay", str(empty)],
    }[command]
    assert main(argv) == 2
    assert f"{empty} holds no measurements (it lists no configurations)" in one_line_error(capsys)


def test_a_kernel_tuner_cache_whose_every_run_failed_says_so(capsys, tmp_path):
    cache = tmp_path / "cache.json"
    cache.write_text(
        json.dumps(
            {
                "cache": {
                    "32,1,0": {"block_size_x": 32, "block_size_y": 1, "use_shmem": 0, "time": "RuntimeFailedConfig"}
                }
            }
        )
    )
    assert main(["validate", str(cache), "--device", "A100", "--spec", str(CONVOLUTION_SPEC)]) == 2
    assert f"{cache}: all 1 configurations failed when measured: none has a time" in one_line_error(capsys)


@pytest.mark.parametrize("returned, shown", [("None", "None"), ("5", "the int 5")])
@pytest.mark.parametrize("command", ["validate", "tune"])
def test_kernel_for_returning_no_kernel_is_named(capsys, tmp_path, monkeypatch, command, returned, shown):
    monkeypatch.setenv("PYSTENCILS_PERF_TUNING_DIR", str(tmp_path / "records"))
    spec = tmp_path / "spec.py"
    spec.write_text(
        "lattice_updates = 100\nfixed_parameters = {'use_shmem': 0}\n\ndef kernel_for(params):\n"
        f"    return {returned}\n"
    )
    cache = tmp_path / "cache.json"
    cache.write_text(
        json.dumps({"cache": {"32,1,0": {"block_size_x": 32, "block_size_y": 1, "use_shmem": 0, "time": 1.0}}})
    )
    argv = {
        "validate": ["validate", str(cache), "--device", "A100", "--spec", str(spec)],
        "tune": ["tune", str(spec), "--device", "A100", "--replay", str(cache)],
    }[command]
    assert main(argv) == 2
    err = one_line_error(capsys)
    assert f"SPEC file {spec}: kernel_for(" in err and f") returned {shown}, not a kernel" in err


@pytest.mark.parametrize("command", ["validate", "calibrate"])
@pytest.mark.parametrize("data", ["volumes", "kernel tuner"])
def test_a_semicolon_separated_csv_is_named(capsys, tmp_path, command, data):
    source = V100_DATA if data == "volumes" else ROOT / "validation/data/external/a100_convolution15_noshmem.csv"
    semicolons = tmp_path / "data.csv"
    semicolons.write_text("\n".join(line.replace(",", ";") for line in source.read_text().splitlines()[:5]) + "\n")
    assert main([command, str(semicolons), "--device", "V100", "--spec", str(V100_DATA.parent / "star3d_r2.py")]) == 2
    assert f"data file {semicolons} separates its columns with ';', not ','" in one_line_error(capsys)


@pytest.mark.parametrize("cache", [A4000_CACHE, "plain"])
def test_calibrate_on_a_kernel_tuner_cache_says_what_it_needs(capsys, tmp_path, cache):
    if cache == "plain":
        cache = tmp_path / "cache.json"
        cache.write_text(json.dumps({"cache": {}}))
    assert main(["calibrate", str(cache), "--device", "A100", "--spec", str(CONVOLUTION_SPEC)]) == 2
    err = one_line_error(capsys)
    assert (
        f"calibrate needs a CSV of measured volumes (bx,by,bz,fx,fy,fz,meas_...), and {cache} is Kernel Tuner "
        "data, which validate and tune --replay read" in err
    )


def test_tune_without_cupy_says_what_needs_it_and_how_to_replay(capsys, traced_spec, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError, as where it is not installed
    assert main(["tune", str(traced_spec), "--device", "V100"]) == 2
    err = one_line_error(capsys)
    assert "tune needs cupy and a CUDA GPU, but cupy cannot be imported" in err and "measure needs" not in err
    assert "without a GPU, tune SPEC --replay CACHE.json[.gz] replays a Kernel Tuner cache" in err


def test_threads_beyond_the_devices_limit_are_refused_by_rank():
    import pystencils_perf as pp
    from pystencils_perf.catalog import star_3d

    with pytest.raises(
        pp.ConfigurationError, match="threads: 2048 exceeds V100-PCIe-32GB's limit of 1024 threads per block"
    ):
        pp.rank(star_3d(1, (32, 32, 32)), "V100", threads=2048)
