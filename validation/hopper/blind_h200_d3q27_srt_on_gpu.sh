#!/bin/bash
# lbmpy's D3Q27 SRT on a lent H200, measured blind to the H200's own table of what partly written lines cost
# (predictions in data/blind_predictions/, committed before the lease): timed twice, then read with ncu. From the
# repository root on the lent GPU with .whl carried; about a minute and a half.
set -u
source validation/hopper/gpu_env.sh
timed_twice_and_counted d3q27_srt validation/hopper/d3q27_srt.py
grep "^===" "$LOG"
