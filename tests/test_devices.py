import json
import os
import re
import tomllib
from pathlib import Path

import pytest

import pystencils_perf as pp
from pystencils_perf.devices import (
    CURVE_NAMES,
    OPTIONAL_CURVE_NAMES,
    DATA_DIR,
    KINDS,
    LATENCY_QUANTITIES,
    OPTIONAL_QUANTITIES,
    alias_index,
    library_files,
    load_device_file,
)

VALIDATION = Path(__file__).parent.parent / "validation" / "devices"
LIBRARY = {
    "V100-PCIe-32GB",
    "P100-PCIe-16GB",
    "GTX-TITAN-X",
    "GTX-1080-Ti",
    "RTX-2080-Ti",
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "A100-PCIe-40GB",
    "A40",
    "RTX-A6000",
    "RTX-A4000",
    "RTX-3090",
    "H100-SXM5-80GB",
    "H100-PCIe-80GB",
    "GH200-96GB",
    "H200-SXM-141GB",
    "L40",
    "L40S",
    "MI210",
    "MI100",
    "MI50",
    "MI250X-GCD",
    "MI300A",
    "MI300X",
    "RX-6900-XT",
    "Radeon-PRO-W6600",
    "Radeon-PRO-W7800",
    "TITAN-RTX",
    "RTX-3060-Laptop",
}
#: the AMD devices by architecture: CDNA runs wave64 on 4 SIMD16 per CU, RDNA wave32 (HIP's default there) on 2 SIMD32
CDNA = ("MI100", "MI210", "MI250X-GCD", "MI300A", "MI300X")
RDNA = ("RX-6900-XT", "Radeon-PRO-W6600", "Radeon-PRO-W7800")


def test_every_library_device_loads_with_a_source_and_kind_for_every_number():
    devices = pp.list_devices()
    assert {d.name for d in devices} == LIBRARY
    for d in devices:
        assert d.format_version == 3
        assert d.l1_hit_latency_cycles < d.l2_hit_latency_cycles < d.dram_latency_cycles
        assert set(d.kinds) == set(d.sources) and set(d.kinds.values()) <= set(KINDS)
        assert all(src.strip() for src in d.sources.values())
        assert all(len(set(src.split("; "))) == len(src.split("; ")) for src in d.sources.values()), d.name
        assert all(d.notes[k] for k, kind in d.kinds.items() if kind == "estimate")
        assert all(bool(c.fitted_on) != bool(c.borrowed_from) for c in d.curves.values())
        assert d.l2_bandwidth_capacity_bytes <= d.l2_capacity_bytes
        assert d.l2_effective_capacity_bytes == d.l2_dram_capacity_bytes <= d.l2_capacity_bytes


def test_aliases_are_unique_across_the_library():
    names = [n.lower() for d in pp.list_devices() for n in {d.name, *d.aliases}]
    index = alias_index()
    assert len(index) == len({"".join(ch for ch in n if ch.isalnum()) for n in names})


@pytest.mark.parametrize(
    "alias, name",
    [
        ("V100", "V100-PCIe-32GB"),
        ("H100", "H100-SXM5-80GB"),
        ("h100 pcie", "H100-PCIe-80GB"),
        ("A100", "A100-SXM4-40GB"),
        ("A100-PCIe", "A100-PCIe-40GB"),
        ("A6000", "RTX-A6000"),
        ("A4000", "RTX-A4000"),
        ("2080Ti", "RTX-2080-Ti"),
        ("3090", "RTX-3090"),
        ("GH200", "GH200-96GB"),
        ("NVIDIA H200", "H200-SXM-141GB"),
        ("L40", "L40"),
        ("L40S", "L40S"),
        ("P100", "P100-PCIe-16GB"),
        ("Tesla P100-PCIE-16GB", "P100-PCIe-16GB"),
        ("A40", "A40"),
        ("MI100", "MI100"),
        ("MI250X", "MI250X-GCD"),
        ("AMD Instinct MI250X", "MI250X-GCD"),
        ("MI300X", "MI300X"),
        ("mi300a", "MI300A"),
        ("RX 6900 XT", "RX-6900-XT"),
        ("6900XT", "RX-6900-XT"),
        ("W6600", "Radeon-PRO-W6600"),
        ("AMD Radeon PRO W7800", "Radeon-PRO-W7800"),
    ],
)
def test_aliases(alias, name):
    assert pp.get_device(alias).name == name


def test_an_alias_claimed_twice_is_an_error(tmp_path, monkeypatch):
    twin = tmp_path / "twin.toml"
    twin.write_text((DATA_DIR / "a40.toml").read_text().replace('name = "A40"', 'name = "A40 twin"'))
    monkeypatch.setattr("pystencils_perf.devices.library_files", lambda: [*library_files(), twin])
    with pytest.raises(
        pp.DeviceError, match="'(nvidia)?a40' names both A40 \\(a40.toml\\) and A40 twin \\(twin.toml\\)"
    ):
        pp.get_device("V100")


def test_a_device_by_name_parses_its_own_file_alone(monkeypatch):
    """The first `get_device` of a process read all 29 files (0.05 s) to find one; each file's top-level keys
    name it."""
    import pystencils_perf.devices as devices

    parsed, parse = [], devices._parse

    def counted(resolved, mtime_ns):
        parsed.append(resolved.name)
        return parse(resolved)

    monkeypatch.setattr(devices, "_parse_cached", counted)  # and nothing kept from earlier tests
    devices._library_paths.cache_clear()
    assert pp.get_device("W7800").name == "Radeon-PRO-W7800"
    assert parsed == ["radeon-pro-w7800.toml"]


def test_unknown_device_names_the_key():
    with pytest.raises(pp.DeviceError, match="unknown device 'GTX 9000'.*known devices: A100"):
        pp.get_device("GTX 9000")


@pytest.mark.parametrize(
    "typo, meant",
    [("H10", "H100 (H100-SXM5-80GB)"), ("A10O", "A100 (A100-SXM4-40GB)"), ("V100-PCIe-32G", "V100-PCIe-32GB")],
)
def test_unknown_device_suggests_the_closest(typo, meant):
    with pytest.raises(pp.DeviceError, match=f"unknown device '{typo}'; did you mean {re.escape(meant)}[ ?]"):
        pp.get_device(typo)


@pytest.mark.parametrize("typo", ["TITAN Xp", "RTX 4090", "RTX 3080", "A6000 Ada", "W7900", "GTX 1070"])
def test_another_card_is_not_suggested_on_a_weak_match(typo):
    """TITAN RTX (Turing) got "did you mean GTX-TITAN-X?" (Maxwell), RTX 4090 (Ada) RTX-3090 (Ampere): a name
    far from a spelling, or another model number, is another card, not a typo."""
    with pytest.raises(pp.DeviceError) as error:
        pp.get_device(typo)
    assert "did you mean" not in str(error.value)


@pytest.mark.parametrize(
    "alias, name, architecture, compute_capability",
    [
        ("TITAN RTX", "TITAN-RTX", "turing", "7.5"),
        ("NVIDIA TITAN RTX", "TITAN-RTX", "turing", "7.5"),
        ("RTX 3060 Laptop GPU", "RTX-3060-Laptop", "ampere", "8.6"),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", "RTX-3060-Laptop", "ampere", "8.6"),
    ],
)
def test_titan_rtx_and_rtx_3060_laptop(alias, name, architecture, compute_capability):
    device = pp.get_device(alias)
    assert (device.name, device.architecture, device.compute_capability) == (name, architecture, compute_capability)


def test_the_known_devices_include_the_short_aliases():
    """The list says which short names work, not only the full names nobody types."""
    with pytest.raises(pp.DeviceError) as error:
        pp.get_device("GTX 9000")
    assert "did you mean" not in str(error.value)
    known = str(error.value).split("known devices: ")[1]
    for listed in ("V100-PCIe-32GB (V100)", "A100-SXM4-40GB (A100)", "H100-SXM5-80GB (H100)", "L40S,"):
        assert listed in known


def test_v100_keeps_the_authors_numbers():
    """validation/v100_star3d.py reproduces the paper's errors with these; the library rework must not move them."""
    v100 = pp.get_device("V100")
    assert (v100.sm_count, v100.clock_ghz, v100.l2_effective_capacity_bytes, v100.l1_capacity_bytes) == (
        80,
        1.38,
        6291456,
        131072,
    )
    assert (v100.dram_bandwidth_gbs, v100.l2_bandwidth_gbs) == (790.0, 2500.0)
    assert v100.curves["l2_load_capacity_miss"].status.startswith("fitted on V100 stencil measurements")


# -- the measured numbers are the published figures ---------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_benches():
    return json.loads((VALIDATION / "gpu_benches.json").read_text())


@pytest.fixture(scope="module")
def l2_fits():
    return json.loads((VALIDATION / "l2_fits.json").read_text())


def _library_entries():
    for path in library_files():
        raw = tomllib.loads(path.read_text())
        yield path.name, raw


def test_every_gpu_benches_file_cited_names_the_commit(gpu_benches):
    for fname, raw in _library_entries():
        for key, entry in raw.items():
            if isinstance(entry, dict) and re.search(r"gpu-benches \S+\.txt", entry.get("source", "")):
                assert gpu_benches["commit"] in entry["source"], (fname, key)


def test_measured_dram_bandwidths_are_gpu_benches_stream_scale_maxima(gpu_benches):
    """A measured DRAM bandwidth is the best 'scale' figure of the gpu-stream file it cites."""
    checked = 0
    for fname, raw in _library_entries():
        entry = raw["dram_bandwidth_gbs"]
        if entry["kind"] == "measured" and entry["source"].startswith("te42kyfo/gpu-benches gpu-stream/"):
            gpu = entry["source"].split("gpu-stream/")[1].split(".txt")[0]
            assert entry["value"] == max(gpu_benches["benchmarks"]["gpu-stream"][gpu]["scale"]), fname
            checked += 1
    assert checked == 9  # A100 40/80, A40, H100-PCIe, GH200, L40, MI210, MI100, RX 6900 XT


def test_fitted_l2_curves_and_capacities_are_the_fit_scripts_output(l2_fits):
    fits = {f["device"]: f for f in l2_fits["l2_fits"]}
    assert set(fits) == {"A100-SXM4-80GB", "H100-PCIe-80GB", "GH200-96GB", "L40", "MI210", "RX-6900-XT"}
    for name, fit in fits.items():
        dev = pp.get_device(name)
        curve = dev.curves["l2_load_capacity_miss"]
        assert (curve.a, curve.b, curve.c) == (fit["a"], fit["b"], fit["c"]) and curve.rms_residual == fit[
            "rms_residual"
        ]
        assert (
            dev.l2_dram_capacity_bytes == fit["l2_dram_capacity_bytes"]
            and dev.kinds["l2_dram_capacity_bytes"] == "measured"
        )


def test_measured_plateaus_are_the_fit_scripts_output(l2_fits):
    """The MI100's L2 and the RX 6900 XT's Infinity Cache bandwidths are fit_l2.py's plateaus of their files."""
    plateaus = l2_fits["plateaus"]
    assert pp.get_device("MI100").l2_bandwidth_gbs == plateaus["mi100"]["l2_plateau_gbs"]
    rx = pp.get_device("RX 6900 XT")
    assert rx.l2_bandwidth_gbs == plateaus["rx6900xt"]["l2_plateau_gbs"]
    assert rx.last_level_cache_bandwidth_gbs == plateaus["rx6900xt"]["last_level_cache_plateau_gbs"]
    assert rx.kinds["last_level_cache_bandwidth_gbs"] == "measured"


@pytest.mark.parametrize("name", CDNA + RDNA)
def test_amd_devices_have_the_wavefront_size_issue_rate_and_sources_asked_for(name):
    """CDNA: wave64, one wave64 instruction per CU and cycle; RDNA: wave32, and its SM equivalent is the WGP (2 CUs,
    where a workgroup runs in the default WGP mode): four instructions per WGP and cycle, two L0 caches, twice a
    CU's VGPRs and work-items; each with its source."""
    d = pp.get_device(name)
    rdna = name in RDNA
    assert d.vendor == "amd" and d.architecture.startswith("rdna" if rdna else "cdna")
    assert d.compute_capability.startswith("gfx")
    assert (
        d.warp_size == (32 if rdna else 64)
        and "ROCm documentation, GPU hardware specifications table" in d.sources["warp_size"]
    )
    if rdna:
        assert "wavefrontsize64 defaults to off" in d.sources["warp_size"]
    assert d.warp_instructions_per_cycle_per_sm == (4 if rdna else 1)
    unit = "WGP" if rdna else "CU"
    assert d.sources["warp_instructions_per_cycle_per_sm"].startswith(
        f"counts wave{d.warp_size} instructions per {unit} and cycle"
    )
    assert d.l1_caches_per_sm == (2 if rdna else 1)
    if rdna:
        assert "WGP mode" in d.sources["sm_count"] and d.max_threads_per_sm == 2048
        assert "x 4 SIMD32" in d.sources["registers_per_sm"]
    for key in ("sm_count", "shared_memory_per_sm_bytes", "l2_capacity_bytes"):
        assert "GPU hardware specifications table" in d.sources[key], key
    for key in ("max_threads_per_sm", "registers_per_sm", "register_allocation_unit"):
        assert "AMDGPUBaseInfo.cpp" in d.sources[key], key
    assert d.registers_per_sm % d.register_allocation_unit == 0
    # LDS: 64 KiB per workgroup; a CU's 64 KiB on CDNA, a WGP's 128 KiB on RDNA shared by its resident workgroups
    assert d.shared_memory_limit_per_block_bytes == 65536
    assert d.shared_memory_per_sm_bytes == (131072 if rdna else 65536)
    if rdna:
        assert "getAddressableLocalMemorySize" in d.sources["shared_memory_per_block_bytes"]
    for key in LATENCY_QUANTITIES[1:]:
        assert (
            "gpu-benches" in d.sources[key]
            and "gpu-latency/" in d.sources[key]
            and (d.kinds[key] == "measured") == (name in ("MI210", "RX-6900-XT"))
        )


def test_infinity_caches_are_where_the_gpus_have_them():
    """RDNA2/3 and MI300 have a cache behind the L2; CDNA1/2 do not, and report none."""
    for name in CDNA + RDNA:
        d = pp.get_device(name)
        has = name in RDNA or name.startswith("MI300")
        assert bool(d.last_level_cache_bytes) == has == bool(d.last_level_cache_bandwidth_gbs), name
        if has:
            assert (
                d.last_level_cache_bytes > d.l2_capacity_bytes
                and d.last_level_cache_bandwidth_gbs > d.dram_bandwidth_gbs
            )
            assert "GPU hardware specifications table" in d.sources["last_level_cache_bytes"]
    assert (
        pp.get_device("V100").last_level_cache_bytes == 0
        and "last_level_cache_bytes" not in pp.get_device("V100").kinds
    )
    assert [pp.get_device(n).l2_channel_count for n in ("MI100", "MI210", "MI250X")] == [32, 32, 32]


def test_split_l2_gpus_have_two_capacities():
    """A100/H100: one partition keeps the bandwidth, 0.7-0.9 of the L2 avoids DRAM (gpu-benches gpu-cache, gpu-l2-cache)."""
    for name in ("A100-SXM4-80GB", "H100-PCIe-80GB", "GH200-96GB"):
        dev = pp.get_device(name)
        assert 0.35 < dev.l2_bandwidth_capacity_bytes / dev.l2_capacity_bytes < 0.5
        assert 0.65 < dev.l2_dram_capacity_bytes / dev.l2_capacity_bytes < 0.9


# -- malformed files name the problem --------------------------------------------------------------------------


def _write(tmp_path, mutate, source="v100-pcie-32gb.toml") -> Path:
    raw = (DATA_DIR / source).read_text()
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
        (
            lambda t: t.replace("[sm_count]\nvalue = 80", "[sm_count]\nvalue = -80"),
            "'sm_count' must be a positive number",
        ),
        (lambda t: t.replace("[sm_count]\nvalue = 80", "[sm_count]\nvalue = 80.5"), "'sm_count' must be an integer"),
        (
            lambda t: t.replace('source = "Ernst et al. (JPDC 2023) sec. IV.A (clock used for the measurements)"', ""),
            "'clock_ghz' has no source",
        ),
        (lambda t: t.replace("[l2_bandwidth_gbs]", "[l2_bandwith_gbs]"), "unknown key\\(s\\) l2_bandwith_gbs"),
        (
            lambda t: t.replace("[curves.l2_load_capacity_miss]", "[curves.l2_misses]"),
            "missing curve \\[curves.l2_load_capacity_miss\\]",
        ),
        (lambda t: t + "\n[[[", "is not valid TOML"),
        (
            lambda t: t.replace("format_version = 3\n", ""),
            "format version 1 is older than the version 3 .* add 'format_version = 3'",
        ),
        (
            lambda t: t.replace("format_version = 3", "format_version = 2"),
            "format version 2 is older .* add 'format_version = 3' and the latencies .*dram_latency_cycles\\) \\(`pystencils-perf",
        ),
        (
            lambda t: t.replace("format_version = 3", "format_version = 4"),
            "format_version 4 is not 3.*use a newer pystencils-perf",
        ),
        (
            lambda t: t.replace("[dram_latency_cycles]\nvalue = 435.7", "[dram_latency_cycles]\nvalue = 100"),
            "latencies must grow from l1_hit_latency_cycles",
        ),
        (
            lambda t: t.replace('[sm_count]\nvalue = 80\nkind = "datasheet"', "[sm_count]\nvalue = 80"),
            "'sm_count' needs kind = one of measured",
        ),
        (
            lambda t: t.replace(
                '[sm_count]\nvalue = 80\nkind = "datasheet"', '[sm_count]\nvalue = 80\nkind = "estimate"'
            ),
            "'sm_count' is an estimate without a note",
        ),
        (
            lambda t: t.replace(
                "[l2_dram_capacity_bytes]\nvalue = 6291456", "[l2_dram_capacity_bytes]\nvalue = 7000000"
            ),
            "l2_dram_capacity_bytes exceeds l2_capacity_bytes",
        ),
        (
            lambda t: t.replace("[l2_bandwidth_gbs]\nvalue = 2500.0", "[l2_bandwidth_gbs]\nvalue = 500.0"),
            "l2_bandwidth_gbs is not above dram_bandwidth_gbs",
        ),
        (
            lambda t: t.replace("[l1_sector_bytes]\nvalue = 32", "[l1_sector_bytes]\nvalue = 48"),
            "l1_line_bytes is not a multiple of l1_sector_bytes",
        ),
        (
            lambda t: t.replace('fitted_on = "V100 stencil', 'borrowed_from = "X"\nfitted_on = "V100 stencil', 1),
            "curve \\[curves.l1_load_capacity_miss\\] needs exactly one of fitted_on",
        ),
        (
            lambda t: t.replace("[l2_capacity_bytes]\nvalue", '[l2_capacity_bytes]\nunit = "B"\nvalue'),
            "'l2_capacity_bytes' has unknown key\\(s\\) unit",
        ),
        (
            lambda t: re.sub("\naliases = .*\n", "\naliases = 5\n", t),
            "'aliases' must be a list of names such as \\[\"V100\"\\], got 5",
        ),
        (lambda t: re.sub("\naliases = \\[", "\naliases = [5, ", t), "'aliases' must be a list of names"),
        (
            lambda t: t.replace('compute_capability = "7.0"', "compute_capability = 7.0"),
            "'compute_capability' must be a string such as \"8.0\" \\(NVIDIA's major.minor\\), got 7.0",
        ),
        (
            lambda t: t.replace('compute_capability = "7.0"', 'compute_capability = "sm_70"'),
            "'compute_capability' must be",
        ),
        (
            lambda t: t.replace('compute_capability = "7.0"\n', ""),
            "missing or empty 'compute_capability': an NVIDIA GPU",
        ),
        (lambda t: "curves = 5\n" + t.split("[curves.")[0], "'curves' must be tables \\[curves.NAME\\]"),
        (
            lambda t: t + '\n[last_level_cache_bytes]\nvalue = 134217728\nkind = "datasheet"\nsource = "x"\n',
            "last_level_cache_bytes and last_level_cache_bandwidth_gbs go together",
        ),
        (
            lambda t: (
                t + '\n[last_level_cache_bytes]\nvalue = 4194304\nkind = "datasheet"\nsource = "x"\n'
                '[last_level_cache_bandwidth_gbs]\nvalue = 1900.0\nkind = "datasheet"\nsource = "x"\n'
            ),
            "last_level_cache_bytes is not above l2_capacity_bytes",
        ),
        (
            lambda t: t + '\n[l2_channel_count]\nvalue = 0\nkind = "datasheet"\nsource = "x"\n',
            "'l2_channel_count' must be a positive number",
        ),
        # issue 58: values that ranked silently
        (
            lambda t: t.replace("[clock_ghz]\nvalue = 1.38", "[clock_ghz]\nvalue = 1e-30"),
            "'clock_ghz' = 1e-30 is outside the plausible range 0.1 to 5",
        ),
        (
            lambda t: t.replace("[clock_ghz]\nvalue = 1.38", "[clock_ghz]\nvalue = 1e300"),
            "'clock_ghz' = 1e\\+300 is outside",
        ),
        (
            lambda t: t.replace("[sm_count]\nvalue = 80", "[sm_count]\nvalue = 100000000"),
            "'sm_count' = 100000000 is outside",
        ),
        (
            lambda t: t.replace("[l1_capacity_bytes]\nvalue = 131072", "[l1_capacity_bytes]\nvalue = 1"),
            "'l1_capacity_bytes' = 1 is outside the plausible range 1024",
        ),
        (lambda t: t.replace('vendor = "nvidia"', 'vendor = "intel"'), "unknown vendor 'intel'; known: nvidia, amd"),
        (
            lambda t: t.replace('architecture = "volta"', 'architecture = "banana"'),
            "unknown nvidia architecture 'banana'; known: maxwell, pascal, volta",
        ),
    ],
)
def test_malformed_device_file(tmp_path, mutate, message):
    path = _write(tmp_path, mutate)
    with pytest.raises(pp.DeviceError, match=message):
        load_device_file(path)


def test_missing_device_file():
    with pytest.raises(pp.DeviceError, match="does not exist"):
        pp.get_device("/nonexistent/gpu.toml")


def test_a_folder_is_no_device_file(tmp_path):
    (tmp_path / "gpu.toml").mkdir()
    with pytest.raises(pp.DeviceError, match="gpu.toml is a folder, not a device file"):
        pp.get_device(tmp_path / "gpu.toml")


def test_files_are_parsed_once_per_process_and_again_when_changed(tmp_path):
    path = _write(tmp_path, lambda t: t)
    first = load_device_file(path)
    assert load_device_file(str(path)) is first and pp.get_device(path) is first
    path.write_text(path.read_text().replace('name = "V100-PCIe-32GB"', 'name = "Edited"'))
    mtime_ns = path.stat().st_mtime_ns
    os.utime(path, ns=(mtime_ns, mtime_ns + 10**9))  # a new version even where the clock is coarse
    assert load_device_file(path).name == "Edited"


def test_calibrated_curves_count_as_fitted(tmp_path):
    """`pystencils-perf calibrate` writes a curve with a calibration table instead of fitted_on."""
    path = _write(
        tmp_path,
        lambda t: t.replace(
            'borrowed_from = "V100-PCIe-32GB"\n',
            'calibration = {data = "h100.csv", rms_relative_error_after = 0.04}\n',
            1,
        ),
        source="h100-sxm5-80gb.toml",
    )
    curve = load_device_file(path).curves["l1_load_capacity_miss"]
    assert curve.fitted_on.startswith("h100.csv") and curve.rms_residual == 0.04 and not curve.borrowed_from


def test_template_keys_are_the_same_in_every_file():
    keys = [set(tomllib.loads(p.read_text())) - set(OPTIONAL_QUANTITIES) for p in library_files()]
    assert all(k == keys[0] for k in keys)
    curve_keys = [set(tomllib.loads(p.read_text())["curves"]) - set(OPTIONAL_CURVE_NAMES) for p in library_files()]
    assert all(k == set(CURVE_NAMES) for k in curve_keys)


def test_an_amd_device_file_without_its_gfx_target_is_refused(tmp_path):
    """Without it, hipcc compiled the registers for its default architecture (gfx90a) whatever the GPU."""
    text = (Path(pp.get_device("W6600").path)).read_text()
    path = tmp_path / "w6600.toml"
    path.write_text(re.sub(r'(?m)^compute_capability = "gfx\d+\w*"\n', "", text))
    with pytest.raises(pp.DeviceError, match="missing or empty 'compute_capability': an AMD GPU needs its gfx target"):
        load_device_file(path)
