import tomllib
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.devices import DATA_DIR, load_device_file

LIBRARY = {"V100-PCIe-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "L40S", "MI210"}


def test_library_loads_and_every_number_has_a_source():
    devices = pp.list_devices()
    assert {d.name for d in devices} == LIBRARY
    for d in devices:
        assert all(src.strip() for src in d.sources.values())
        assert all(c.source for c in d.curves.values())
        assert d.l2_effective_capacity_bytes <= d.l2_capacity_bytes


def test_amd_part_has_wide_wavefronts_and_64_byte_lines():
    mi = pp.get_device("MI210")
    assert mi.vendor == "amd" and mi.warp_size == 64 and mi.l1_line_bytes == 64


@pytest.mark.parametrize("alias", ["V100", "v100-pcie-32gb", "H100", "a100", "NVIDIA H200"])
def test_aliases(alias):
    assert pp.get_device(alias).name in LIBRARY


def test_unknown_device_names_the_key():
    with pytest.raises(pp.DeviceError, match="unknown device 'GTX 9000'.*known devices: A100"):
        pp.get_device("GTX 9000")


def _write(tmp_path, mutate) -> Path:
    raw = (DATA_DIR / "v100-pcie-32gb.toml").read_text()
    path = tmp_path / "mine.toml"
    path.write_text(mutate(raw))
    return path


def test_user_device_file(tmp_path):
    path = _write(tmp_path, lambda t: t.replace('name = "V100-PCIe-32GB"', 'name = "My V100"'))
    dev = pp.get_device(str(path))
    assert dev.name == "My V100" and dev.sm_count == 80


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.replace("[sm_count]\nvalue = 80", "[sm_count]\nvalue = -80"), "'sm_count' must be a positive number"),
        (lambda t: t.replace("[sm_count]\nvalue = 80", "[sm_count]\nvalue = 80.5"), "'sm_count' must be an integer"),
        (lambda t: t.replace('source = "seeds/000 sec. IV.A (clock used for the measurements)"', ""), "'clock_ghz' has no source"),
        (lambda t: t.replace("[l2_bandwidth_gbs]", "[l2_bandwith_gbs]"), "unknown key\\(s\\) l2_bandwith_gbs"),
        (lambda t: t.replace("[curves.l2_load_capacity_miss]", "[curves.l2_misses]"), "missing curve \\[curves.l2_load_capacity_miss\\]"),
        (lambda t: t + "\n[[[", "is not valid TOML"),
    ],
)
def test_malformed_device_file(tmp_path, mutate, message):
    path = _write(tmp_path, mutate)
    with pytest.raises(pp.DeviceError, match=message):
        load_device_file(path)


def test_missing_device_file():
    with pytest.raises(pp.DeviceError, match="does not exist"):
        pp.get_device("/nonexistent/gpu.toml")


def test_template_keys_are_the_same_in_every_file():
    keys = [list(tomllib.loads(p.read_text())) for p in sorted(DATA_DIR.glob("*.toml"))]
    assert all(set(k) == set(keys[0]) for k in keys)
