#!/bin/bash
# Blocks of 32 and 64 threads, blind to the block start rate (cycles_per_block_start; predictions with and without it
# in data/h100/blind_predictions/, committed before the lease): the range-1 star and the Jacobi 2D, each twice. From
# the repository root on the lent GPU with .whl carried; about two minutes. Everything also lands in
# $OUT/block_starts.tar.gz (a lease returns at most eight files).
set -u
source validation/hopper/gpu_env.sh

for run in "" _rerun; do
  for threads in 32 64; do
    step 90 "star3d_r1_t$threads$run" $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --threads $threads \
      --fold $FOLDS --repeats 15 --out "$OUT/star3d_r1_t$threads$run.csv"
    step 60 "jacobi2d_t$threads$run" $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --threads $threads \
      --fold 1x1x1,1x2x1,1x4x1 --repeats 15 --out "$OUT/jacobi2d_t$threads$run.csv"
  done
done
tar -czf "$OUT/block_starts.tar.gz" -C "$OUT" --exclude block_starts.tar.gz .
grep "^===" "$LOG"
