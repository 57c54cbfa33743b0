#!/bin/bash
# DRAM rates by the number of fields a kernel streams and by partly written lines (microbench.py --only
# field_count_rates, with the stream scale beside it), twice. From the repository root on the lent GPU with .whl
# carried; about a minute.
set -u
source validation/hopper/gpu_env.sh
for run in 1 2; do
  step 150 "field_count_rates_$run" python3 validation/hopper/microbench.py --only dram_scale_gbs field_count_rates \
    --json "$OUT/field_count_rates_$run.json"
done
grep "^===" "$LOG"
python3 - "$OUT" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/field_count_rates_{r}.json")) for r in (1, 2))
print("stream scale", "%.0f %.0f GB/s" % (a["dram_scale_gbs"], b["dram_scale_gbs"]))
for k, v in a["field_count_rates"].items():
    print(k, "%.0f %.0f GB/s" % (v["bytes_per_s"] / 1e9, b["field_count_rates"][k]["bytes_per_s"] / 1e9))
PY
