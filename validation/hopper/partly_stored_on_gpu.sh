#!/bin/bash
# Measured blind to the step that prices partly written lines by the warp stores an SM has in flight (predictions in
# data/h100/blind_predictions/, committed before the lease): the copies of 4 and 19 fields at 16, 32 and 64 warps
# per SM (microbench.py --only partly_stored_line_rates, twice), and lbmpy's D3Q27 SRT timed twice and read with
# ncu. From the repository root on the lent GPU with .whl carried; about three minutes.
set -u
source validation/hopper/gpu_env.sh
microbench_twice 120 partly_stored_line_rates partly_stored_line_rates
timed_twice_and_counted d3q27_srt validation/hopper/d3q27_srt.py
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/partly_stored_line_rates_{r}.json"))["partly_stored_line_rates"] for r in (1, 2))
for fields in (4, 19):
    for warps in (16, 32, 64):
        ratios = [x[f"copy_{fields}_warps_{warps}_shift_00"]["bytes_per_s"] / x[f"copy_{fields}_warps_{warps}_shift_01"]["bytes_per_s"]
                  for x in (a, b)]
        print(f"fields {fields} warps {warps}: time ratio {ratios[0]:.3f} {ratios[1]:.3f}, on lines "
              f"{a[f'copy_{fields}_warps_{warps}_shift_00']['bytes_per_s'] / 1e9:.0f} GB/s")
PY
