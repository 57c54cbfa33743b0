#!/bin/bash
# Two lbmpy kernels measured blind after the second lease's model steps, each timed twice, and a tuning run.
#
# Run from the repository root on the lent GPU with .whl carried (README.md in this folder).
set -u
source validation/hopper/gpu_env.sh

step 100 allen_cahn $PP measure validation/hopper/allen_cahn.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/allen_cahn.csv"
step 150 d3q27_cumulant $PP measure validation/hopper/d3q27_cumulant.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q27_cumulant.csv"
step 100 allen_cahn_rerun $PP measure validation/hopper/allen_cahn.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/allen_cahn_rerun.csv"
step 60 tune_allen_cahn $PP tune validation/hopper/allen_cahn.py --device "$DEVICE" --fold $FOLDS --budget 10 --json "$OUT/tune_allen_cahn.json"
step 120 d3q27_cumulant_rerun $PP measure validation/hopper/d3q27_cumulant.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q27_cumulant_rerun.csv"
grep "^===" "$LOG"
