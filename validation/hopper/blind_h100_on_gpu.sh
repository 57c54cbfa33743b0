#!/bin/bash
# The four kernels measured blind on the H200, now on an H100 (blind to every model step), and its store costs.
#
# Run from the repository root on the lent H100 with .whl carried (README.md in this folder).
set -u
source validation/hopper/gpu_env.sh

step 60 microbench python3 validation/hopper/microbench.py --json "$OUT/microbench_stores.json"
step 100 box3d_r1 $PP measure validation/hopper/box3d_r1.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/box3d_r1.csv"
step 60 jacobi2d $PP measure validation/hopper/jacobi2d.py --device "$DEVICE" --fold 1x1x1,1x2x1 --repeats 15 --out "$OUT/jacobi2d.csv"
step 100 allen_cahn $PP measure validation/hopper/allen_cahn.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/allen_cahn.csv"
step 100 d3q27_cumulant $PP measure validation/hopper/d3q27_cumulant.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q27_cumulant.csv"
step 100 box3d_r1_rerun $PP measure validation/hopper/box3d_r1.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/box3d_r1_rerun.csv"
grep "^===" "$LOG"
