"""Two runs of the same `microbench.py` figures side by side (what the device scripts print last).

    python3 validation/hopper/side_by_side.py FIRST.json SECOND.json

A figure that is one number prints as it is; a figure of named points prints each point's bytes per second (and
its data volume, where it has one).
"""

from __future__ import annotations

import json
import sys

#: what `microbench.py` writes about the GPU, not a figure
DEVICE_KEYS = ("device", "sm_count", "l2_bytes")


def volume(point: dict) -> str:
    """A point's data volume where it has one (the L2 capacity curves)."""
    return f" {point['volume_bytes'] / 1e6:.0f} MB" if "volume_bytes" in point else ""


def side_by_side(first: dict, second: dict) -> list[str]:
    """One line per scalar figure or per point of a figure, the first run's value before the second's."""
    lines = []
    for name, value in first.items():
        if name in DEVICE_KEYS:
            continue
        if isinstance(value, dict):
            lines += [
                f"{point}{volume(v)} {v['bytes_per_s'] / 1e9:.0f} {second[name][point]['bytes_per_s'] / 1e9:.0f} GB/s"
                for point, v in value.items()
            ]
        else:
            lines.append(f"{name} {value:.0f} {second[name]:.0f}")
    return lines


if __name__ == "__main__":
    runs = [json.load(open(path)) for path in sys.argv[1:3]]
    print("\n".join(side_by_side(*runs)))
