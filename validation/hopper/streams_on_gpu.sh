#!/bin/bash
# The streaming probes by number of streams (stream1, stream7, stream27 beside stream19: 2, 14, 54 and 38 streams),
# stream19 timed again, its DRAM and L2 volumes (`measure --ncu`) and every counter of three block widths:
# does a narrow block's missing L2 request cost more with more streams in flight, and does DRAM move more bytes
# than the model counts? Run from the repository root on the lent GPU with .whl carried; about four minutes.
set -u
source validation/hopper/gpu_env.sh

for name in stream1 stream7 stream27 stream19; do
  step 120 "$name" $PP measure "validation/hopper/$name.py" --device "$DEVICE" --repeats 15 --out "$OUT/$name.csv"
done
step 120 stream19_ncu $PP measure validation/hopper/stream19.py --device "$DEVICE" --ncu --ncu-path "$NCU" --out "$OUT/stream19_ncu.csv"
echo "=== stream19_full" >>"$LOG"
"$NCU" --set full --kernel-name-base function --kernel-name "regex:^kernel$" --export /tmp/stream19_full --force-overwrite \
  $PP measure validation/hopper/stream19.py --device "$DEVICE" --out /dev/null --ncu-pass --blocks 4x64x2,8x32x2,256x2x1 \
  >>"$LOG" 2>&1 && "$NCU" --import /tmp/stream19_full.ncu-rep --csv --page raw --print-units base >"$OUT/stream19_full_raw.csv"
echo "=== stream19_full: rc $?" >>"$LOG"
grep "^===" "$LOG"
