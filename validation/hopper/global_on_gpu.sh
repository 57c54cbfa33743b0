#!/bin/bash
# Issue 56: the other half of Kernel Tuner's convolution on the H200, blind: every configuration without shared
# memory (use_shmem 0, 1920; `data/h200/global/convolution_global_sample.csv`), whose predictions were committed
# before the lease (`convolution_shmem_sample.py H200 ... --global-half --compiled-registers`:
# `data/h200/global/convolution_global_blind_predictions.csv`). With the shared-memory half of two earlier leases
# it makes the H200's cache of the whole space (`merge_caches.py`), which the tuner replays with use_shmem as one
# more parameter. The cubins (nvcc 13.0, sm_90) are compiled here, not on the GPU, and carried packed:
#   python3 validation/data/external/compile_convolution_registers.py /tmp/convolution.cu sm_90 /tmp/global.csv \
#     validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz --cubins .gpu/cubins_global
#   tar -C .gpu -cJf .gpu/cubins_global.tar.xz cubins_global
# From the repository root with .gpu/cubins_global.tar.xz carried; about two minutes.
set -u
source validation/hopper/gpu_env.sh
mkdir -p /tmp/global && tar -C /tmp/global -xJf .gpu/cubins_global.tar.xz || exit 1
echo "$(ls /tmp/global/cubins_global | wc -l) cubins unpacked" >>"$LOG"
step 400 convolution_global python3 validation/hopper/convolution_on_gpu.py /tmp/global/cubins_global \
  "$OUT/convolution15_global_kernel_tuner_cache.json.gz" --seconds 380
nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n '/Clocks$/,/SM Clock Samples/p' >>"$LOG" 2>&1
grep "^===\|cubins unpacked" "$LOG"
grep -h "json.gz:\|deadline\|interrupted" "$LOG"
