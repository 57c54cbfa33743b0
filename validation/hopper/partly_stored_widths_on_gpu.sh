#!/bin/bash
# Whether a line that a warp store writes in part costs more where another block completes it
# (microbench.py --only partly_stored_line_widths, twice): copies of 1, 4 and 19 fields in 2D blocks 32 to 1024 wide,
# stores on and one double off their lines. Ready for the next lent H100 or H200; not run yet (README, "Block width").
# From the repository root on the lent GPU with .whl carried; about two minutes. Everything also lands in
# $OUT/partly_stored_widths.tar.gz (a lease returns at most eight files).
set -u
source validation/hopper/gpu_env.sh
microbench_twice 150 partly_stored_line_widths partly_stored_line_widths
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys
runs = [json.load(open(f"{sys.argv[1]}/partly_stored_line_widths_{r}.json"))["partly_stored_line_widths"]
        for r in (1, 2)]
blocks = sorted({tuple(v["block"]) for v in runs[0].values()}, key=lambda b: (b[0] * b[1], b[0]))
for fields in sorted({v["fields"] for v in runs[0].values()}):
    cells = []
    for width, height in blocks:
        key = f"copy_{fields}_block_{width}x{height}_shift_0"
        ratios = " ".join(f"{run[key + '1']['ms'] / run[key + '0']['ms']:.3f}" for run in runs)
        cells.append(f"{width}x{height}: {ratios}")
    print(f"fields {fields}, time off lines / on lines: " + "; ".join(cells))
PY
tar -czf "$OUT/partly_stored_widths.tar.gz" -C "$OUT" --exclude partly_stored_widths.tar.gz .
