#!/bin/bash
# The L2 capacity curves (microbench.py --only l2_capacity_curves): read bandwidth by data volume with parts of
# their own and parts shared by two blocks far apart, twice. From the repository root on the lent GPU with .whl
# carried; about a minute.
set -u
source validation/hopper/gpu_env.sh
for run in 1 2; do
  step 120 "l2_capacity_curves_$run" python3 validation/hopper/microbench.py --only l2_capacity_curves \
    --json "$OUT/l2_capacity_curves_$run.json"
done
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/l2_capacity_curves_{r}.json"))["l2_capacity_curves"] for r in (1, 2))
for k in a:
    print(k, "%.0f MB" % (a[k]["volume_bytes"] / 1e6), "%.0f %.0f GB/s" % (a[k]["bytes_per_s"] / 1e9, b[k]["bytes_per_s"] / 1e9))
PY
