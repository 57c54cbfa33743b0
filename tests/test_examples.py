"""The end-to-end examples run and generate kernels whose launch is the one they report."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SUMMARY = re.compile(r"^(\w+) on (\S+): block (\d+)x(\d+)x(\d+), fold (\d+)x(\d+)x(\d+), ([\d.]+) GLup/s", re.M)
LAUNCH = re.compile(r"launch of the generated kernel: block \((\d+), (\d+), (\d+)\)")


@pytest.mark.slow
@pytest.mark.parametrize(
    "script, kernel",
    [("star3d_r4_choose.py", "star3d_r4"), ("allen_cahn_choose.py", "allen_cahn_phase_field")],
)
def test_example_chooses_for_v100_and_h100(script, kernel):
    result = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    summaries, launches = SUMMARY.findall(result.stdout), LAUNCH.findall(result.stdout)
    assert [(s[0], s[1]) for s in summaries] == [(kernel, "V100-PCIe-32GB"), (kernel, "H100-SXM5-80GB")]
    assert [s[2:5] for s in summaries] == launches  # the generated kernel carries the chosen block
    v100, h100 = (float(s[8]) for s in summaries)
    assert h100 > v100  # about 4x the DRAM bandwidth
    assert len(re.findall(r"^[=> ]  1 ", result.stdout, re.M)) == 2  # the head of each ranking


@pytest.mark.slow
def test_quick_start():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    launch, summary = result.stdout.splitlines()[:2]
    _, device, bx, by, bz = SUMMARY.findall(summary)[0][:5]
    assert device == "H100-SXM5-80GB"
    assert launch.startswith(f"(({bx}, {by}, {bz}), ")  # the generated kernel's (block, grid)


@pytest.mark.parametrize(
    "script",
    [
        "quickstart.py",
        pytest.param("star3d_r4_choose.py", marks=pytest.mark.slow),
        pytest.param("allen_cahn_choose.py", marks=pytest.mark.slow),
    ],
)
def test_an_example_piped_into_a_reader_that_stops_ends_quietly(script):
    """`python3 examples/quickstart.py | head -1` ended in a BrokenPipeError traceback (issue 58, item 3)."""
    import signal

    child = subprocess.Popen([sys.executable, str(EXAMPLES / script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # the reader is gone before the first line
    error = child.stderr.read().decode()
    assert child.wait(timeout=600) in (0, -signal.SIGPIPE)
    assert error == ""
