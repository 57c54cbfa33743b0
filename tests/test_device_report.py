import argparse
import re

import pytest

import pystencils_perf as pp
from pystencils_perf.devices import DATA_DIR, library_files, load_device_file
from pystencils_perf.devices.report import add_arguments, confidence_notes, run


def _run(argv) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run(parser.parse_args(argv))


def test_listing_shows_aliases_file_version_and_every_curves_status(capsys):
    assert _run([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(library_files())} devices, ")
    for dev in pp.list_devices():
        block = out.split(f"\n{dev.name}  (")[1].split("\n\n")[0]
        assert f"file: {dev.path} (format 3)" in block and ", ".join(dev.aliases) in block
        assert all(name in block for name in dev.curves)
    h100 = out.split("\nH100-PCIe-80GB  (")[1].split("\n\n")[0]
    assert "l2_load_capacity_miss: fitted on te42kyfo/gpu-benches gpu-l2-cache/h100_pcie.txt" in h100
    assert "previous_wave_z_hit, l2_store_capacity_miss: borrowed from V100-PCIe-32GB" in h100
    assert "DRAM 1704 GB/s (measured)" in h100


def test_devices_name_prints_the_file(capsys):
    assert _run(["A6000"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"# {DATA_DIR / 'rtx-a6000.toml'}"
    assert out.split("\n", 1)[1] == (DATA_DIR / "rtx-a6000.toml").read_text()


def test_unknown_name_is_a_device_error():
    with pytest.raises(pp.DeviceError, match="unknown device 'RTX 9090'"):
        _run(["RTX 9090"])


def test_template_names_the_first_key_left_to_fill_and_is_not_overwritten(tmp_path, capsys):
    path = tmp_path / "my-gpu.toml"
    assert _run(["--template", str(path)]) == 0
    assert "wrote" in capsys.readouterr().out
    text = path.read_text()
    assert text.count("\nvalue = 0") + text.count("\nvalue = [0, 0, 0]") == 29
    with pytest.raises(pp.DeviceError, match="missing or empty string 'name'"):
        load_device_file(path)
    path.write_text(text.replace('name = ""', 'name = "My GPU"').replace('architecture = ""', 'architecture = "x"'))
    with pytest.raises(pp.DeviceError, match="'sm_count' has no source"):
        load_device_file(path)
    with pytest.raises(pp.DeviceError, match="exists; give a new file name"):
        _run(["--template", str(path)])


def test_template_filled_in_loads_and_reports_its_borrowed_curves(tmp_path, capsys):
    """Every value filled from the V100 (sources and kinds given): the file loads; its curves are borrowed."""
    assert _run(["--template"]) == 0
    text = capsys.readouterr().out
    v100 = pp.get_device("V100")
    lines = text.replace('name = ""', 'name = "Filled"').replace('architecture = ""', 'architecture = "volta"')
    lines = lines.replace('compute_capability = ""', 'compute_capability = "7.0"').splitlines()
    key = None
    for i, line in enumerate(lines):
        if line.startswith("[") and not line.startswith("[curves"):
            key = line.strip("[]")
        elif key and line.startswith("value = "):
            value = getattr(v100, key)
            lines[i] = f"value = {list(value) if isinstance(value, tuple) else value}"
        elif key and line == 'source = ""':
            lines[i] = 'source = "copied from the V100 file"'
    path = tmp_path / "filled.toml"
    path.write_text("\n".join(lines) + "\n")
    dev = load_device_file(path)
    assert dev.l2_dram_capacity_bytes == v100.l2_dram_capacity_bytes and dev.count_by_kind()["datasheet"] == 29
    assert confidence_notes(dev) == [
        (
            "l1_load_capacity_miss, l2_load_capacity_miss, previous_wave_xy_hit, previous_wave_z_hit, l2_store_capacity_miss "
            "curves borrowed from V100-PCIe-32GB (not fitted for this GPU)"
        )
    ]


def test_confidence_notes_name_borrowed_curves_and_estimates():
    assert confidence_notes(pp.get_device("V100")) == []
    h100 = confidence_notes(pp.get_device("H100"))
    assert h100[0] == (
        "l1_load_capacity_miss, previous_wave_xy_hit, previous_wave_z_hit, l2_store_capacity_miss "
        "curves borrowed from V100-PCIe-32GB (not fitted for this GPU)"
    )
    assert "l2_load_capacity_miss curve borrowed from GH200-96GB (not fitted for this GPU)" in h100
    assert any(
        line.startswith("l2_dram_capacity_bytes: estimate, 0.83 x L2 as measured on GH200-96GB") for line in h100
    )
    # measured on a lent H100 (validation/hopper/): no longer estimates, so no note
    assert not any("dram_bandwidth_gbs" in line or "l2_bandwidth_gbs" in line for line in h100)
    assert not any("dram_bandwidth_gbs" in line for line in confidence_notes(pp.get_device("H100-PCIe")))


def test_a_user_file_with_a_borrowed_curve_is_reported_as_such(tmp_path):
    text = (DATA_DIR / "v100-pcie-32gb.toml").read_text()
    start = text.index("[curves.l2_load_capacity_miss]")
    end = text.index("[curves.previous_wave_xy_hit]")
    borrowed = re.sub(r"^fitted_on = .*$", 'borrowed_from = "A100-SXM4-80GB"', text[start:end], flags=re.MULTILINE)
    path = tmp_path / "mine.toml"
    path.write_text(text[:start] + borrowed + text[end:])
    assert confidence_notes(load_device_file(path)) == [
        "l2_load_capacity_miss curve borrowed from A100-SXM4-80GB (not fitted for this GPU)"
    ]
