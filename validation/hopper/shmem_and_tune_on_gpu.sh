#!/bin/bash
# Issue 56: Kernel Tuner's convolution with shared memory, the 320 configurations chosen before the lease
# (data/h200/convolution_shmem_sample.csv, blind predictions beside it), from cubins compiled here
# (`compile_convolution_registers.py --shmem --cubins .gpu/cubins`, carried with .gpu). Issue 55:
# create_kernel(..., tune=10) on the README's quick-start kernel and on lbmpy's D3Q19 SRT, call to kernel.
# From the repository root on a lent GPU with .whl and .gpu carried; about four minutes.
set -u
source validation/hopper/gpu_env.sh

step 120 create_kernel_quickstart python3 validation/hopper/create_kernel_tune.py quickstart "$DEVICE" \
  "$OUT/create_kernel_tune_quickstart.json"
step 170 create_kernel_d3q19 python3 validation/hopper/create_kernel_tune.py d3q19 "$DEVICE" \
  "$OUT/create_kernel_tune_d3q19.json"
step 230 convolution_shmem python3 validation/hopper/convolution_on_gpu.py .gpu/cubins \
  "$OUT/convolution15_shmem_kernel_tuner_cache.json.gz" --shmem \
  --sample validation/hopper/data/h200/convolution_shmem_sample.csv --seconds 200
grep "^===" "$LOG"
grep -h "^call\|^{" "$LOG"
tail -4 "$LOG"
