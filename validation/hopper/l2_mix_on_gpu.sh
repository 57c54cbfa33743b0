#!/bin/bash
# The L2's rates for 8-B loads, stores and copies, eight loads per lane in flight (microbench.py --only l2_mix_rates),
# with the device file's 16-B read figure beside them, twice. From the repository root on the lent GPU with .whl
# carried; under a minute.
set -u
source validation/hopper/gpu_env.sh
for run in 1 2; do
  step 120 "l2_mix_rates_$run" python3 validation/hopper/microbench.py --only l2_read_gbs l2_mix_rates \
    --json "$OUT/l2_mix_rates_$run.json"
done
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/l2_mix_rates_{r}.json")) for r in (1, 2))
print("l2_read_gbs (16-B loads)", "%.0f %.0f GB/s" % (a["l2_read_gbs"], b["l2_read_gbs"]))
for k, v in a["l2_mix_rates"].items():
    print(k, "%.0f %.0f GB/s" % (v["bytes_per_s"] / 1e9, b["l2_mix_rates"][k]["bytes_per_s"] / 1e9))
PY
