#!/bin/bash
# The block start rate on an H200, which borrows the H100's (cycles_per_block_start): block_life.py, then the range-1
# star in blocks of 32 threads, blind (predictions in data/blind_predictions/star3d_r1_t32.csv, committed before the
# lease). From the repository root on a lent H200 with .whl carried; about a minute and a half.
set -u
source validation/hopper/gpu_env.sh

step 120 block_life python3 validation/hopper/block_life.py --json "$OUT/block_life.json"
step 90 star3d_r1_t32 $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --threads 32 --fold $FOLDS \
  --repeats 15 --out "$OUT/star3d_r1_t32.csv"
grep "^===" "$LOG"
sed -n '/^=== block_life:/,/^=== block_life: rc/p' "$LOG"
