"""The README's example commands run and print what they promise."""

import subprocess
import sys
from pathlib import Path

import pytest

from pystencils_perf_an5d.table5 import table5_entries

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name, *args):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_table5_csv():
    lines = run_example("table5.py", "--csv").splitlines()
    assert lines[0] == "stencil,gpu,precision,bT,bS,hSN,model_gflops,bottleneck"
    rows = [line.split(",") for line in lines[1:]]
    assert len(rows) == 84
    for row, entry in zip(rows, table5_entries()):
        assert row[:3] == [entry.stencil, entry.gpu, entry.precision]
        assert float(row[6]) == pytest.approx(entry.model_gflops, rel=0.005)
        assert row[7] == entry.bottleneck


@pytest.mark.slow
def test_compare_example():
    out = run_example("compare.py")
    assert out.count("temporal blocking would pay x") == 2
    assert "star2d1r(dst)" in out and "star3d1r(dst)" in out
