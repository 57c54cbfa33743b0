#!/bin/bash
# Issue 56: why the H200's shared-memory launches order as they do (`validation/shared_memory/report.md`, "Studies of
# the night of 2026-11-28"): every counter of `ncu --set full` (stall reasons per issued instruction, eligible warps,
# pipe and shared-memory throughput) for eleven launches of Kernel Tuner's shared-memory convolution
# (`data/h200/shmem_profile_sample.csv`): the model's two top picks (blocks one row high, measured as predicted), the
# measured best and launches that differ from it in one thing (block width, tile, read_only), and the A100's fastest
# launch with and without read_only. Their cubins (nvcc 13.0, sm_90) are compiled here, not on the GPU:
#   python3 validation/data/external/compile_convolution_registers.py .gpu/convolution.cu sm_90 /tmp/regs.csv \
#     validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz --shmem \
#     --configurations validation/hopper/data/h200/shmem_profile_sample.csv --cubins .gpu/shmem_profile
# and carried with .gpu. Ready for the next lent H100 or H200; not run yet. From the repository root, with .whl and
# .gpu carried; about three minutes (each launch twice, as `convolution_profile.py` launches it).
set -u
source validation/hopper/gpu_env.sh
echo "=== shmem_profile: ncu --set full" >>"$LOG"
timeout 400 "$NCU" --set full --csv --page raw --kernel-name regex:convolution_kernel \
  python3 validation/hopper/convolution_profile.py .gpu/shmem_profile --shmem \
  --sample validation/hopper/data/h200/shmem_profile_sample.csv >"$OUT/convolution15_shmem_ncu_raw.csv" 2>>"$LOG"
echo "=== shmem_profile: rc $?" >>"$LOG"
grep "^===" "$LOG"
tail -15 "$LOG"
