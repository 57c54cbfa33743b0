#!/bin/bash
# Does a block hold its warps' slots until its slowest warp ends? The Jacobi 2D and the star r=1 unfolded and folded
# by two, in blocks of 64, 128 and 256 threads (the committed sets have 256 and 1024): where that is what slows
# unfolded launches of 1024 threads (one round of loads per thread), their gap to the folded ones narrows as the
# blocks shrink (validation/hopper/README.md, "Block size and folding of latency-bound kernels").
#
# Run from the repository root on the lent GPU with .whl carried (README.md in this folder); under three minutes.
set -u
source validation/hopper/gpu_env.sh

for threads in 64 128 256; do
  step 60 "jacobi2d_t$threads" $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --threads $threads \
    --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/jacobi2d_t$threads.csv"
done
for threads in 64 256; do
  step 90 "star3d_r1_t$threads" $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --threads $threads \
    --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/star3d_r1_t$threads.csv"
done
grep "^===" "$LOG"
