"""The `devices` subcommand and the confidence lines that reports print about a device.

``pystencils-perf devices`` lists the library: per GPU its aliases, file, format
version, how many numbers are measured, and per capacity-miss curve what it was
fitted on or whom it is borrowed from. ``devices NAME`` prints one device's file,
``devices --template FILE`` writes a file to fill in. `confidence_notes` says, one
line each, which parts of a device are borrowed or estimated, so that a ranking for
an H100 does not read as if it were as well founded as one for the V100.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import DeviceError
from . import CURVE_NAMES, FORMAT_VERSION, KINDS, OPTIONAL_QUANTITIES, Device, get_device, list_devices

#: what each quantity means, with its unit (the template's comments)
QUANTITY_HELP = {
    "sm_count": "streaming multiprocessors (CUs on CDNA, WGPs of 2 CUs on RDNA)",
    "clock_ghz": "SM clock under load, GHz",
    "warp_size": "threads per warp (wavefront)",
    "max_threads_per_block": "threads per block, at most",
    "max_block_dim": "largest block extent in x, y, z",
    "max_threads_per_sm": "resident threads per SM, at most",
    "max_blocks_per_sm": "resident blocks per SM, at most",
    "registers_per_sm": "32-bit registers per SM",
    "max_registers_per_thread": "registers one thread may use",
    "register_allocation_unit": "registers allocated per warp in units of this",
    "shared_memory_per_sm_bytes": "shared memory per SM, bytes: what the resident blocks share",
    "l1_capacity_bytes": "L1 data cache per SM that serves global loads, bytes",
    "l1_line_bytes": "L1 allocation line, bytes",
    "l1_sector_bytes": "L1 transfer sector, bytes",
    "l1_bank_count": "L1 banks served per cycle",
    "l1_bank_width_bytes": "bytes per L1 bank",
    "l2_capacity_bytes": "nominal L2 capacity, bytes",
    "l2_dram_capacity_bytes": "data volume the L2 holds without DRAM traffic, bytes (gpu-l2-cache knee)",
    "l2_bandwidth_capacity_bytes": "data volume read by all SMs that keeps the full L2 bandwidth, bytes (one partition if split)",
    "l2_sector_bytes": "L2 sector, bytes",
    "dram_fetch_bytes": "DRAM access granularity, bytes",
    "dram_bandwidth_gbs": "DRAM bandwidth for 1 load + 1 store stream (STREAM scale), GB/s",
    "l2_bandwidth_gbs": "L2 bandwidth, GB/s",
    "fp64_peak_gflops": "FP64 peak (non-tensor), GFLOP/s",
    "fp32_peak_gflops": "FP32 peak (non-tensor), GFLOP/s",
    "warp_instructions_per_cycle_per_sm": "warp (wavefront) instructions one SM (CU) issues per cycle: its warp schedulers",
    "l1_hit_latency_cycles": "load-to-use latency of an L1 hit, core cycles (pointer chase)",
    "l2_hit_latency_cycles": "load-to-use latency of an L2 hit, core cycles (pointer chase)",
    "dram_latency_cycles": "load-to-use latency of a DRAM access, core cycles (pointer chase beyond the L2)",
    "last_level_cache_bytes": "optional: cache behind the L2 (AMD Infinity Cache / MALL), bytes; leave out if none",
    "last_level_cache_bandwidth_gbs": "optional, with last_level_cache_bytes: that cache's bandwidth, GB/s",
    "l2_channel_count": "optional: independent L2 channels addresses are interleaved over",
    "l2_partition_count": "optional (1 if left out): partitions the L2 is split into, each caching the data its own "
    "SMs access (2 on GA100 and GH100)",
    "l1_caches_per_sm": "optional (1 if left out): L1 caches serving one SM's warps side by side (2 on an RDNA WGP)",
    "l1_requests_per_cycle": "optional (1 if left out): warp load requests one L1 accepts per cycle, at most "
    "(0.5 on GA10x: gpu-strides' one-line float load takes 2 cycles there)",
    "global_loads_cached_in_l1": "optional (1 if left out): 0 where the L1 caches only loads that take the read-only "
    "path and the others go to L2 (Maxwell, Pascal GP10x)",
    "shared_memory_per_block_bytes": "optional (shared_memory_per_sm_bytes if left out): shared memory one block may "
    "allocate, bytes (CUDA's opt-in maximum; 64 KiB of an RDNA WGP's 128 KiB)",
    "shared_memory_reserved_per_block_bytes": "optional (0 if left out): shared memory the runtime reserves per "
    "resident block, bytes (1 KiB from compute capability 8.0)",
}
TEMPLATE_LENDER = "V100-PCIe-32GB"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``pystencils-perf devices``."""
    parser.add_argument("name", nargs="?", help="print this device's file (library name, alias or path)")
    parser.add_argument(
        "--template",
        metavar="FILE",
        nargs="?",
        const="-",
        help="write a device file to fill in (no FILE or '-': standard output); refuses to overwrite",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``pystencils-perf devices``; errors raise `DeviceError`."""
    if args.template is not None and args.name is not None:  # "" too: it is a NAME or FILE given empty
        raise DeviceError("devices: give a NAME to print or --template FILE to write, not both")
    if args.template is not None:
        return _write_template(args.template)
    if args.name is not None:  # "": get_device says that the name is empty
        dev = get_device(args.name)
        print(f"# {dev.path}")
        print(Path(dev.path).read_text(), end="")
        return 0
    print(library_report(list_devices()))
    return 0


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def curve_lines(dev: Device) -> list[str]:
    """The calibration status of the curves, curves with the same status on one line."""
    groups: dict[str, list[str]] = {}
    for name, curve in dev.curves.items():
        groups.setdefault(curve.status, []).append(name)
    return [f"{', '.join(names)}: {status}" for status, names in groups.items()]


def device_summary(dev: Device) -> str:
    """Several lines about one device: where its file is, what it says, how well founded that is."""
    kinds = dev.kinds or {}
    counts = dev.count_by_kind()
    figures = ", ".join(
        f"{label} {value} ({kinds[key]})"
        for key, label, value in (
            ("dram_bandwidth_gbs", "DRAM", f"{dev.dram_bandwidth_gbs:g} GB/s"),
            ("l2_bandwidth_gbs", "L2", f"{dev.l2_bandwidth_gbs:g} GB/s"),
            ("l2_dram_capacity_bytes", "L2 without DRAM traffic", _mib(dev.l2_dram_capacity_bytes)),
            ("l2_bandwidth_capacity_bytes", "at full L2 bandwidth", _mib(dev.l2_bandwidth_capacity_bytes)),
            ("l2_channel_count", "L2 channels", dev.l2_channel_count),
            ("l2_partition_count", "L2 partitions", dev.l2_partition_count),
            ("l1_caches_per_sm", "L1 caches per SM", dev.l1_caches_per_sm),
            ("l1_requests_per_cycle", "L1 requests per cycle", f"{dev.l1_requests_per_cycle:g}"),
            ("global_loads_cached_in_l1", "global loads cached in L1", dev.global_loads_cached_in_l1),
            ("shared_memory_per_block_bytes", "shared memory per block", f"{dev.shared_memory_per_block_bytes} B"),
            ("last_level_cache_bytes", "last-level cache", _mib(dev.last_level_cache_bytes)),
            ("last_level_cache_bandwidth_gbs", "at", f"{dev.last_level_cache_bandwidth_gbs:g} GB/s"),
        )
        if key in kinds
    )
    lines = [
        (
            f"{dev.name}  ({dev.vendor} {dev.architecture} {dev.compute_capability}, {dev.sm_count} SMs, "
            f"{dev.clock_ghz:g} GHz, L2 {_mib(dev.l2_capacity_bytes)})"
        ),
        f"  file: {dev.path} (format {dev.format_version})",
        f"  aliases: {', '.join(dev.aliases) or '-'}",
        f"  numbers: {', '.join(f'{counts[k]} {k}' for k in KINDS)} (of {sum(counts.values())})",
        f"  {figures}",
    ]
    lines += [f"  curves {line}" for line in curve_lines(dev)]
    return "\n".join(lines)


def library_report(devices: list[Device]) -> str:
    measured = sum(d.count_by_kind()["measured"] for d in devices)
    total = sum(sum(d.count_by_kind().values()) for d in devices)
    head = f"{len(devices)} devices, {measured} of {total} numbers measured; `devices NAME` prints a file"
    return "\n\n".join([head, *(device_summary(d) for d in devices)])


def confidence_notes(device: Device) -> list[str]:
    """One line per borrowed or estimated part of `device`, for the header of a report.

    Curves are grouped by lender, estimated numbers by what they rest on; a device
    with everything measured, fitted or from a datasheet gets no lines.
    """
    notes = []
    lenders: dict[str, list[str]] = {}
    for name, curve in device.curves.items():
        if curve.borrowed_from:
            lenders.setdefault(curve.borrowed_from, []).append(name)
    notes += [
        f"{', '.join(names)} curve{'s' if len(names) > 1 else ''} borrowed from {lender} (not fitted for this GPU)"
        for lender, names in lenders.items()
    ]
    basis: dict[str, list[str]] = {}
    for key, kind in (device.kinds or {}).items():
        if kind == "estimate":
            basis.setdefault(device.notes[key], []).append(key)
    notes += [f"{', '.join(keys)}: estimate, {note}" for note, keys in basis.items()]
    return notes


def template_text() -> str:
    """A device file with every key, its unit and zero values: the loader names the first one left unfilled."""
    from . import _QUANTITIES

    lender = get_device(TEMPLATE_LENDER)
    lines = [
        "# A pystencils-perf device file: fill in every value, kind and source, then pass its path as --device.",
        "# kind: measured (a benchmark on this GPU), datasheet (vendor documentation), derived (computed from",
        '# other numbers, say how), estimate (taken from another GPU or assumed; needs note = "what it rests on").',
        f"format_version = {FORMAT_VERSION}",
        'name = ""',
        "aliases = []",
        'vendor = "nvidia"',
        'architecture = ""',
        'compute_capability = ""',
    ]
    for f in _QUANTITIES:
        zero = "[0, 0, 0]" if f.name == "max_block_dim" else "0"
        table = [f"[{f.name}]", f"value = {zero}", 'kind = "datasheet"', 'source = ""']
        if f.name in OPTIONAL_QUANTITIES:  # commented out: a zero would not load, and most GPUs leave them out
            table = [f"# {line}" for line in table]
        lines += ["", f"# {QUANTITY_HELP[f.name]}", *table]
    lines += [
        "",
        f"# Capacity-miss curves, borrowed from {TEMPLATE_LENDER} until fitted (`pystencils-perf calibrate`).",
    ]
    for name in CURVE_NAMES:
        c = lender.curves[name]
        lines += [
            f"[curves.{name}]",
            f"a = {c.a!r}",
            f"b = {c.b!r}",
            f"c = {c.c!r}",
            f"d = {c.d!r}",
            f"complement = {'true' if c.complement else 'false'}",
            f'borrowed_from = "{TEMPLATE_LENDER}"',
            f'source = "borrowed from {TEMPLATE_LENDER}: {c.source}"',
        ]
    return "\n".join(lines) + "\n"


def _write_template(target: str) -> int:
    text = template_text()
    if target == "-":
        sys.stdout.write(text)
        return 0
    if not target:  # Path("") is the current folder, which "exists" would blame
        raise DeviceError("devices --template: the path is empty; give a new file name, or '-' for standard output")
    path = Path(target)
    if path.exists():
        raise DeviceError(f"devices --template: {path} exists; give a new file name")
    try:
        path.write_text(text)
    except OSError as e:
        raise DeviceError(f"devices --template: cannot write {path}: {e.strerror}") from None
    print(f"wrote {path}: fill in every value and source (`pystencils-perf devices {path}` checks it)")
    return 0
