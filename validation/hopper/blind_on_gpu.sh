#!/bin/bash
# Two kernels the model has not seen, measured blind, and the store and in-flight microbenchmarks.
#
# Run from the repository root on the lent GPU with .whl carried (README.md in this folder). The box and
# Jacobi kernels are timed twice (a rerun) for their run-to-run spread.
set -u
source validation/hopper/gpu_env.sh

step 90 microbench python3 validation/hopper/microbench.py --json "$OUT/microbench_stores.json"
step 150 box3d_r1 $PP measure validation/hopper/box3d_r1.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/box3d_r1.csv"
step 90 jacobi2d $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/jacobi2d.csv"
step 90 jacobi2d_t256 $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --threads 256 --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/jacobi2d_t256.csv"
step 150 box3d_r1_rerun $PP measure validation/hopper/box3d_r1.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/box3d_r1_rerun.csv"
step 90 jacobi2d_rerun $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/jacobi2d_rerun.csv"
grep "^===" "$LOG"
tail -c 3000 "$OUT/microbench_stores.json"
