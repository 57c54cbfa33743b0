#!/bin/bash
# Why blocks 32 wide run up to 17 % slower than blocks 256 wide with the same volumes (README, "Block width"), twice
# each: copies of 1, 4 and 19 fields in 2D blocks 32 to 1024 wide with stores on and one double off their lines
# (microbench.py --only partly_stored_line_widths: the store side), and reads of the same fields with and without
# their x- or y-neighbours, also at 16 warps per SM (--only neighbour_read_widths: the load side). Ready for the
# next lent H100 or H200; not run yet. From the repository root on the lent GPU with .whl carried; about four
# minutes.
# Everything also lands in $OUT/block_widths.tar.gz (a lease returns at most eight files).
set -u
source validation/hopper/gpu_env.sh
microbench_twice 150 partly_stored_line_widths partly_stored_line_widths
microbench_twice 150 neighbour_read_widths neighbour_read_widths
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys


def runs(figure):
    return [json.load(open(f"{sys.argv[1]}/{figure}_{r}.json"))[figure] for r in (1, 2)]


def ratios(figure, prefix, slow, fast):
    """Per block (as the figure's keys name it), the two runs' time ratio of the `slow` variant over the `fast`."""
    pairs = runs(figure)
    blocks = sorted({k[len(prefix):-len(fast)] for k in pairs[0] if k.startswith(prefix) and k.endswith(fast)},
                    key=lambda b: (len(b), b))
    return "; ".join(f"{b}: " + " ".join(f"{run[prefix + b + slow]['ms'] / run[prefix + b + fast]['ms']:.3f}"
                                          for run in pairs) for b in blocks)


for fields in (1, 4, 19):
    print(f"fields {fields}, copy, time off lines / on lines:",
          ratios("partly_stored_line_widths", f"copy_{fields}_block_", "_shift_01", "_shift_00"))
    for neighbours, axis in ((1, "x"), (2, "y")):
        print(f"fields {fields}, read, time with / without {axis}-neighbours:",
              ratios("neighbour_read_widths", f"read_{fields}_block_", f"_neighbours_{neighbours}", "_neighbours_0"))
PY
tar -czf "$OUT/block_widths.tar.gz" -C "$OUT" --exclude block_widths.tar.gz .
