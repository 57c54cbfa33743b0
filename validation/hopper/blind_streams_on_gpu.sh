#!/bin/bash
# Two streaming kernels measured blind to the L2 partitions' step, whose predictions were committed before the lease
# (data/h100/blind_predictions/): D3Q19's streaming in single precision, whose waves take about the L2, and D3Q15's
# in double. Each timed twice, and the float one's volumes read with ncu. From the repository root on the lent GPU
# with .whl carried; about two minutes.
set -u
source validation/hopper/gpu_env.sh

for name in stream19_float stream15; do
  step 120 "$name" $PP measure "validation/hopper/$name.py" --device "$DEVICE" --repeats 15 --out "$OUT/$name.csv"
  step 120 "${name}_rerun" $PP measure "validation/hopper/$name.py" --device "$DEVICE" --repeats 15 --out "$OUT/${name}_rerun.csv"
done
step 120 stream19_float_ncu $PP measure validation/hopper/stream19_float.py --device "$DEVICE" --ncu --ncu-path "$NCU" \
  --out "$OUT/stream19_float_ncu.csv"
grep "^===" "$LOG"
