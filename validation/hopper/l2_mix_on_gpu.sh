#!/bin/bash
# The L2's rates for 8-B loads, stores and copies, eight loads per lane in flight (microbench.py --only l2_mix_rates),
# with the device file's 16-B read figure beside them, twice. From the repository root on the lent GPU with .whl
# carried; under a minute.
set -u
source validation/hopper/gpu_env.sh
microbench_twice 120 l2_mix_rates l2_read_gbs l2_mix_rates
grep "^===" "$LOG"
