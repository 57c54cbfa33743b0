#!/bin/bash
# The star of radius 2 measured blind to the GH100 devices' older-wave curve, whose predictions were committed before
# the lease (data/h100/blind_predictions/star3d_r2.csv): timed, then its volumes read with ncu. From the repository
# root on the lent GPU with .whl carried; about a minute and a half.
set -u
source validation/hopper/gpu_env.sh
step 120 star3d_r2 $PP measure validation/hopper/star3d_r2.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/star3d_r2.csv"
step 150 star3d_r2_ncu $PP measure validation/hopper/star3d_r2.py --device "$DEVICE" --fold $FOLDS --ncu --ncu-path "$NCU" \
  --out "$OUT/star3d_r2_ncu.csv"
grep "^===" "$LOG"
