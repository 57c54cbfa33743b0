#!/bin/bash
# Nsight Compute counters on this machine's GPU: the volumes of every candidate of the three Hopper data
# sets (`measure --ncu`), every counter of a few narrow and wide blocks, and the memory figures of
# microbench.py. Run from the repository root, like run_on_gpu.sh (second lease of 2026-11-26).
set -u
source validation/hopper/gpu_env.sh

step 90 microbench python3 validation/hopper/microbench.py --json "$OUT/microbench.json"
"$NCU" --query-metrics --chip gh100 2>&1 | grep -i "l1tex__data_pipe_lsu_wavefronts\|l1tex__t_requests\|lts__t_requests" >"$OUT/ncu_gh100_metrics.txt"
step 120 d3q19_srt_ncu $PP measure validation/hopper/d3q19_srt.py --device "$DEVICE" --ncu --ncu-path "$NCU" --out "$OUT/d3q19_srt_ncu.csv"
step 120 star3d_r1_ncu $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --fold $FOLDS --ncu --ncu-path "$NCU" --out "$OUT/star3d_r1_ncu.csv"
step 120 star3d_r4_ncu $PP measure examples/star3d_r4.py --device "$DEVICE" --fold $FOLDS --ncu --ncu-path "$NCU" --out "$OUT/star3d_r4_ncu.csv"

full() {  # full NAME SPEC FOLDS BLOCKS: every counter of `ncu --set full` for these candidates, as raw CSV
  "$NCU" --set full --kernel-name-base function --kernel-name "regex:^(d3q19_srt|star3d_r1)$" \
    --export "/tmp/$1" --force-overwrite \
    $PP measure "$2" --device "$DEVICE" --out /dev/null --ncu-pass --fold "$3" --blocks "$4" >/dev/null &&
  "$NCU" --import "/tmp/$1.ncu-rep" --csv --page raw --print-units base >"$OUT/$1_full_raw.csv"
}
# `timeout` runs programs, not shell functions: the full sets run without `step` (ncu ends with its child)
full d3q19_srt validation/hopper/d3q19_srt.py 1x1x1 1x8x64,4x8x16,16x8x4,32x8x2,256x2x1 >>"$LOG" 2>&1
full star3d_r1 validation/hopper/star3d_r1.py 1x1x1 1x16x64,4x16x16,16x16x4,64x16x1 >>"$LOG" 2>&1
grep "^===" "$LOG"
