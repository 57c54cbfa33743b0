#!/bin/bash
# Block size against the life of a block's warps: block_life.py (a hand-written Jacobi 2D and copy, timed, then
# with every warp's life recorded), then the Jacobi 2D of jacobi2d.py and the range-1 star measured with blocks of
# 128 to 1024 threads, each twice. From the repository root on the lent GPU with .whl carried; about three minutes.
# Everything also lands in $OUT/block_life.tar.gz (a lease returns at most eight files).
set -u
source validation/hopper/gpu_env.sh

step 240 block_life python3 validation/hopper/block_life.py --json "$OUT/block_life.json"
for run in "" _rerun; do
  for threads in ${JACOBI_THREADS-128 256 512 1024}; do
    step 60 "jacobi2d_t$threads$run" $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --threads $threads \
      --fold 1x1x1,1x2x1,1x4x1 --repeats 15 --out "$OUT/jacobi2d_t$threads$run.csv"
  done
  step 90 "star3d_r1_t256$run" $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --threads 256 \
    --fold $FOLDS --repeats 15 --out "$OUT/star3d_r1_t256$run.csv"
done
tar -czf "$OUT/block_life.tar.gz" -C "$OUT" --exclude block_life.tar.gz .
grep "^===" "$LOG"
sed -n '/^=== block_life:/,/^=== block_life: rc/p' "$LOG"
