#!/bin/bash
# Measure the Hopper data sets on this machine's GPU with `pystencils-perf measure` and `tune`.
#
# Run from the repository root on a machine with an NVIDIA GPU, cupy and nvcc (the lent H100/H200 image
# has them). The Python packages the image lacks travel as wheels in .whl/ (pystencils 2.1, lbmpy 2.1.1,
# islpy, sympy 1.14 and pystencils-perf itself, built with `pip wheel --no-deps -w .whl .`); README.md
# in this folder says how. Everything lands in $OUT: one CSV per data set, the tuning record, the log.
set -u
source validation/hopper/gpu_env.sh

step 150 star3d_r4 $PP measure examples/star3d_r4.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/star3d_r4.csv"
step 150 d3q19_srt $PP measure validation/hopper/d3q19_srt.py --device "$DEVICE" --repeats 15 --out "$OUT/d3q19_srt.csv"
step 150 star3d_r1 $PP measure validation/hopper/star3d_r1.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/star3d_r1.csv"
step 90 tune_star3d_r4 $PP tune examples/star3d_r4.py --device "$DEVICE" --budget 10 --json "$OUT/tune_star3d_r4.json"
# a second run of the same candidates: the run-to-run spread beside every accuracy figure
step 150 star3d_r4_rerun $PP measure examples/star3d_r4.py --device "$DEVICE" --fold $FOLDS --repeats 15 --out "$OUT/star3d_r4_rerun.csv"
step 200 star3d_r4_ncu $PP measure examples/star3d_r4.py --device "$DEVICE" --fold $FOLDS --ncu --out "$OUT/star3d_r4_ncu.csv"
grep "^===" "$LOG"
