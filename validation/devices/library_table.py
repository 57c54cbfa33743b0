"""Write the per-GPU parameter tables of `validation/devices.md` from the device library.

The tables are generated so that they cannot drift from the files:
``python3 validation/devices/library_table.py`` rewrites the part of devices.md
between the two markers and prints the summary table (also in docs/devices.md, where a test compares it).
"""

from __future__ import annotations

from pathlib import Path

from pystencils_perf.devices import KINDS, list_devices
from pystencils_perf.devices.report import QUANTITY_HELP

DOC = Path(__file__).parent.parent / "devices.md"
BEGIN, END = "<!-- library tables: begin -->", "<!-- library tables: end -->"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value(dev, key) -> str:
    v = getattr(dev, key)
    if key.endswith("_bytes") and v >= 2**20:
        return f"{v} ({v / 2**20:.2f} MiB)"
    return "x".join(str(x) for x in v) if isinstance(v, tuple) else f"{v:g}"


def summary_table(devices) -> str:
    rows = [
        "| GPU | measured | datasheet | derived | estimate | DRAM GB/s | L2 GB/s | L2 MiB: nominal / no DRAM traffic / full bandwidth | L2 miss curve |",
        "|---|---:|---:|---:|---:|---|---|---|---|",
    ]
    for d in devices:
        c = d.count_by_kind()
        k = d.kinds
        curve = d.curves["l2_load_capacity_miss"]
        curve_text = (
            f"borrowed from {curve.borrowed_from}"
            if curve.borrowed_from
            else (
                f"fitted to gpu-l2-cache (RMS {curve.rms_residual:.3f})"
                if curve.rms_residual is not None
                else f"fitted on {curve.fitted_on}"
            )
        )
        rows.append(
            f"| {d.name} | {c['measured']} | {c['datasheet']} | {c['derived']} | {c['estimate']} "
            f"| {d.dram_bandwidth_gbs:g} ({k['dram_bandwidth_gbs']}) | {d.l2_bandwidth_gbs:g} ({k['l2_bandwidth_gbs']}) "
            f"| {d.l2_capacity_bytes / 2**20:.1f} / {d.l2_dram_capacity_bytes / 2**20:.1f} ({k['l2_dram_capacity_bytes']}) "
            f"/ {d.l2_bandwidth_capacity_bytes / 2**20:.1f} ({k['l2_bandwidth_capacity_bytes']}) | {curve_text} |"
        )
    total = {kind: sum(d.count_by_kind()[kind] for d in devices) for kind in KINDS}
    rows.append(
        f"| **all {len(devices)}** | **{total['measured']}** | {total['datasheet']} | {total['derived']} | {total['estimate']} | | | | |"
    )
    return "\n".join(rows)


def device_table(dev) -> str:
    rows = [
        f"### {dev.name}",
        "",
        f"`{Path(dev.path).name}`; aliases: {', '.join(f'`{a}`' for a in dev.aliases)}",
        "",
        "| parameter | value | kind | source (note) |",
        "|---|---|---|---|",
    ]
    for key in (k for k in QUANTITY_HELP if k in dev.kinds):  # optional quantities only where the file gives them
        note = f" ({dev.notes[key]})" if key in dev.notes else ""
        rows.append(f"| `{key}` | {_value(dev, key)} | {dev.kinds[key]} | {_cell(dev.sources[key] + note)} |")
    rows += ["", "| curve | a | b | c | status |", "|---|---|---|---|---|"]
    for name, c in dev.curves.items():
        rows.append(f"| `{name}` | {c.a:g} | {c.b:g} | {c.c:g} | {_cell(c.status)} |")
    return "\n".join(rows)


def main() -> None:
    devices = list_devices()
    tables = "\n\n".join([summary_table(devices), *(device_table(d) for d in devices)])
    text = DOC.read_text()
    head, rest = text.split(BEGIN)
    tail = rest.split(END)[1]
    DOC.write_text(f"{head}{BEGIN}\n{tables}\n{END}{tail}")
    print(summary_table(devices))


if __name__ == "__main__":
    main()
