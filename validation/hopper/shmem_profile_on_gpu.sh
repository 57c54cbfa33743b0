#!/bin/bash
# Issue 56: why the H200's shared-memory launches order as they do (`validation/shared_memory/report.md`, "Studies of
# the night of 2026-11-28"). Two profiles of Kernel Tuner's shared-memory convolution, each of the timed launch alone
# (`convolution_profile.py --timed-only`, ncu's range from cudaProfilerStart/Stop), clocks left as found:
#  1. every counter of `ncu --set full` (stall reasons per issued instruction, eligible warps, pipe and shared-memory
#     throughput) for eleven launches (`data/h200/shmem_profile_sample.csv`): the model's two top picks (blocks one
#     row high, measured as predicted), the measured best and launches that differ from it in one thing (block width,
#     tile, read_only), and the A100's fastest launch with and without read_only;
#  2. the shared-memory wavefronts and instructions, the warp instructions, cycles and stall reasons of all 320
#     launches of the timed sample (`data/h200/convolution_shmem_sample.csv`), in four parts of 80 so that a part cut
#     off by its time limit loses no other.
# The cubins (nvcc 13.0, sm_90) are compiled here, not on the GPU, and carried with .gpu:
#   python3 validation/data/external/compile_convolution_registers.py /tmp/convolution.cu sm_90 /tmp/regs.csv \
#     validation/data/external/a100_convolution15_kernel_tuner_cache.json.gz --shmem \
#     --configurations validation/hopper/data/h200/convolution_shmem_sample.csv --cubins .gpu/cubins
# and the same with --configurations validation/hopper/data/h200/shmem_profile_sample.csv (two of its launches are
# not in the timed sample) into the same folder. From the repository root; about five minutes.
set -u
source validation/hopper/gpu_env.sh
"$NCU" --version >>"$LOG" 2>&1
NCU_RANGE=("$NCU" --clock-control none --profile-from-start off --csv --page raw --kernel-name regex:convolution_kernel)
PROFILE=(python3 validation/hopper/convolution_profile.py .gpu/cubins --shmem --timed-only)

echo "=== shmem_full: ncu --set full, eleven launches" >>"$LOG"
start=$SECONDS
timeout 200 "${NCU_RANGE[@]}" --set full "${PROFILE[@]}" \
  --sample validation/hopper/data/h200/shmem_profile_sample.csv >"$OUT/convolution15_shmem_ncu_full_raw.csv" 2>>"$LOG"
echo "=== shmem_full: rc $? after $((SECONDS - start)) s, $(wc -l <"$OUT/convolution15_shmem_ncu_full_raw.csv") lines" >>"$LOG"

METRICS=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
METRICS+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
METRICS+=,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed.sum
METRICS+=,sm__cycles_elapsed.avg,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
METRICS+=,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
METRICS+=,smsp__warps_eligible.avg.per_cycle_active,launch__registers_per_thread,launch__occupancy_limit_registers
METRICS+=,launch__occupancy_limit_shared_mem,launch__waves_per_multiprocessor
for reason in barrier long_scoreboard mio_throttle short_scoreboard math_pipe_throttle wait not_selected lg_throttle \
  selected no_instruction dispatch_stall branch_resolving; do
  METRICS+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done
python3 - <<'EOF'
import csv
rows = list(csv.DictReader(open("validation/hopper/data/h200/convolution_shmem_sample.csv")))
for part in range(4):
    with open(f"/tmp/shmem_sample_{part}.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, rows[0].keys())
        writer.writeheader()
        writer.writerows(rows[part::4])
EOF
for part in 0 1 2 3; do
  echo "=== shmem_counters_$part: ncu --metrics, 80 launches" >>"$LOG"
  start=$SECONDS
  timeout 110 "${NCU_RANGE[@]}" --metrics "$METRICS" "${PROFILE[@]}" --sample /tmp/shmem_sample_$part.csv \
    >"$OUT/convolution15_shmem_ncu_counters_$part.csv" 2>>"$LOG"
  echo "=== shmem_counters_$part: rc $? after $((SECONDS - start)) s, $(wc -l <"$OUT/convolution15_shmem_ncu_counters_$part.csv") lines" >>"$LOG"
done
grep "^===" "$LOG"
grep -c "^==PROF== Profiling" "$LOG"
tail -5 "$LOG"
