#!/bin/bash
# Issue 56: the rest of Kernel Tuner's shared-memory convolution on the H200, blind. The first lease timed 320
# configurations (`data/h200/convolution_shmem_sample.csv`), and the model's slowest-warp term was shaped on that
# lease's counters, so those 269 launches no longer score the model out of sample. This one times the other 2122
# configurations of the A100 cache's `use_shmem = 1` half (`data/h200/shmem_rest/convolution_shmem_sample.csv`,
# `convolution_shmem_sample.py H200 ... --rest-of ... --compiled-registers`), whose predictions were committed before
# it (`data/h200/shmem_rest/convolution_shmem_blind_predictions.csv`). The cubins (nvcc 13.0, sm_90) are compiled here,
# not on the GPU, and carried packed (over 64 MiB unpacked):
#   python3 validation/data/external/compile_convolution_registers.py /tmp/convolution.cu sm_90 /tmp/rest.csv \
#     validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz --shmem --shared-loads \
#     --configurations validation/hopper/data/h200/shmem_rest/convolution_shmem_sample.csv --cubins .gpu/cubins
#   tar -C .gpu -cJf .gpu/cubins.tar.xz cubins
# From the repository root with .gpu/cubins.tar.xz carried; about two minutes.
set -u
source validation/hopper/gpu_env.sh
mkdir -p /tmp/rest && tar -C /tmp/rest -xJf .gpu/cubins.tar.xz || exit 1
echo "$(ls /tmp/rest/cubins | wc -l) cubins unpacked" >>"$LOG"
step 400 convolution_shmem_rest python3 validation/hopper/convolution_on_gpu.py /tmp/rest/cubins \
  "$OUT/convolution15_shmem_rest_kernel_tuner_cache.json.gz" --shmem \
  --sample validation/hopper/data/h200/shmem_rest/convolution_shmem_sample.csv --seconds 380
nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n '/Clocks$/,/SM Clock Samples/p' >>"$LOG" 2>&1
grep "^===\|cubins unpacked" "$LOG"
grep -h "json.gz:\|deadline\|interrupted" "$LOG"
