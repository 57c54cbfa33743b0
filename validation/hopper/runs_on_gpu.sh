#!/bin/bash
# The microbenchmarks again, now with DRAM runs of 32 B to 4 KiB, and a real-GPU tune of the blind box kernel.
#
# Run from the repository root on the lent GPU with .whl carried (README.md in this folder).
set -u
source validation/hopper/gpu_env.sh

step 90 microbench python3 validation/hopper/microbench.py --json "$OUT/microbench_runs.json"
step 60 tune_box3d_r1 $PP tune validation/hopper/box3d_r1.py --device "$DEVICE" --fold $FOLDS --budget 10 --json "$OUT/tune_box3d_r1.json"
grep "^===" "$LOG"
python3 -c "import json; d = json.load(open('$OUT/microbench_runs.json'))['dram_run_rates']; [print(k, '%.3g B/s' % v['bytes_per_s'], '%.3g runs/s' % v['runs_per_s']) for k, v in d.items()]"
