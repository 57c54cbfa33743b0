import json
from pathlib import Path

import pytest

from pystencils_perf.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

STAR_SPEC = """
from pystencils_perf.catalog import star_3d
kernel = star_3d(4, (64, 64, 64))
"""


@pytest.fixture
def spec(tmp_path):
    def write(text, name="spec.py"):
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def test_devices(capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "V100-PCIe-32GB" in out and "MI210" in out


def test_accesses_of_assignments(capsys):
    assert main(["accesses", str(EXAMPLES / "jacobi2d_assignments.py")]) == 0
    out = capsys.readouterr().out
    assert "accesses: 4 loads, 1 stores" in out and "store dst[" in out and "threads per axis" in out


TUNABLE_SPEC = """
from pystencils_perf.catalog import star_3d
lattice_updates = 64 ** 3
fixed_parameters = {"size": 64}
def kernel_for(params):
    return star_3d(params["radius"], (params["size"],) * 3)
"""


def test_accesses_of_one_kernel_of_a_tunable_spec(capsys, spec):
    """A SPEC of Kernel Tuner data defines kernels by their parameters: ``--params`` picks one (with the fixed ones)
    for ``accesses`` and ``rank``; without it the command says how."""
    tunable = spec(TUNABLE_SPEC)
    assert main(["accesses", tunable, "--params", "radius=2"]) == 0
    out = capsys.readouterr().out
    assert "star3d_r2" in out and "accesses: 13 loads, 1 stores" in out
    assert main(["accesses", tunable]) == 2
    assert "it defines `kernel_for(params)`" in capsys.readouterr().err
    assert main(["accesses", tunable, "--params", "radius"]) == 2
    assert "give NAME=VALUE pairs separated by commas" in capsys.readouterr().err
    assert main(["accesses", tunable, "--params", "radius=2,radius=3"]) == 2
    assert "parameter 'radius' is given twice" in capsys.readouterr().err
    assert main(["accesses", tunable, "--params", "size=32"]) == 2
    assert "KeyError: 'radius'" in capsys.readouterr().err
    assert (
        main(["rank", tunable, "--params", "radius=1", "--device", "V100", "--blocks", "32x4x8", "--fold", "1x1x1"])
        == 0
    )
    assert "star3d_r1" in capsys.readouterr().out


def test_rank_writes_table_and_json(capsys, spec, tmp_path):
    out_json = tmp_path / "r.json"
    argv = ["rank", spec(STAR_SPEC), "--device", "V100", "--blocks", "32x4x8,8x8x16,64x8x2", "--fold", "1x1x1,1x1x2"]
    assert main(argv + ["--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "6 candidates" in out and "DRAM" in out
    data = json.loads(out_json.read_text())
    assert data["device"] == "V100-PCIe-32GB" and data["kernel"] == "star3d_r4"
    assert len(data["candidates"]) == 6
    glups = [c["glups"] for c in data["candidates"]]
    assert glups == sorted(glups, reverse=True)


@pytest.mark.parametrize(
    "argv_tail, source, message",
    [
        (["--device", "GTX 9000"], STAR_SPEC, "unknown device 'GTX 9000'"),
        (["--device", "V100", "--blocks", "32xQ"], STAR_SPEC, "block '32xQ' is not of the form"),
        (
            ["--device", "V100"],
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[8, 8]')\n"
            "kernel = ps.create_kernel([ps.Assignment(dst[0, 0], src[1, 0])], ps.CreateKernelConfig(target=ps.Target.CPU))\n",
            "not a GPU",
        ),
        (["--device", "V100"], "x = 1\n", "defines neither `kernel` nor `assignments`"),
        (["--device", "V100"], "raise ValueError('boom')\n", "failed at line 1: ValueError: boom"),
        (
            ["--device", "V100"],
            "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[2D]')\n"
            "assignments = [ps.Assignment(dst[0, 0], src[1, 0])]\n",
            "field '(src|dst)' has variable size",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, spec, argv_tail, source, message):
    import re

    assert main(["rank", spec(source)] + argv_tail) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("pystencils-perf: error: ")
    assert re.search(message, err)


def test_variable_size_with_domain(capsys, spec):
    source = (
        "import pystencils as ps\nsrc, dst = ps.fields('src, dst: double[2D]')\n"
        "assignments = [ps.Assignment(dst[0, 0], src[1, 0] + src[0, -1])]\n"
    )
    assert main(["accesses", spec(source), "--domain", "34x66"]) == 0
    assert "threads per axis (x, y, z) (64, 32, 1)" in capsys.readouterr().out
