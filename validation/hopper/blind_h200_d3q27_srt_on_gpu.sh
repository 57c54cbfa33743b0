#!/bin/bash
# lbmpy's D3Q27 SRT on a lent H200, measured blind to the H200's own table of what partly written lines cost
# (predictions in data/blind_predictions/, committed before the lease): timed twice, then read with ncu. From the
# repository root on the lent GPU with .whl carried; about a minute and a half.
set -u
source validation/hopper/gpu_env.sh
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
step 150 d3q27_srt $PP measure validation/hopper/d3q27_srt.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q27_srt.csv"
step 150 d3q27_srt_rerun $PP measure validation/hopper/d3q27_srt.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q27_srt_rerun.csv"
step 200 d3q27_srt_ncu $PP measure validation/hopper/d3q27_srt.py --device "$DEVICE" --ncu --ncu-path "$NCU" \
  --out "$OUT/d3q27_srt_ncu.csv"
grep "^===" "$LOG"
