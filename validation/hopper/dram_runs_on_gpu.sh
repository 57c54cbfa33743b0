#!/bin/bash
# DRAM runs read, written and copied (microbench.py --only dram_run_rates), on an H100 and, where the lease allows,
# stream19 timed again beside them: does the narrow blocks' slowdown come from written runs?
#
# Run from the repository root on the lent GPU with .whl carried (README.md in this folder); about a minute.
set -u
source validation/hopper/gpu_env.sh

step 120 dram_runs python3 validation/hopper/microbench.py --only dram_run_rates --json "$OUT/microbench_dram_runs.json"
step 120 stream19 $PP measure validation/hopper/stream19.py --device "$DEVICE" --repeats 15 --out "$OUT/stream19.csv"
grep "^===" "$LOG"
python3 -c "import json; d = json.load(open('$OUT/microbench_dram_runs.json'))['dram_run_rates']; [print(k, '%.3g B/s' % v['bytes_per_s'], '%.3g runs/s' % v['runs_per_s']) for k, v in d.items()]"
