#!/bin/bash
# DRAM rates by the number of fields a kernel streams and by partly written lines (microbench.py --only
# field_count_rates, with the stream scale beside it), twice. From the repository root on the lent GPU with .whl
# carried; about a minute.
set -u
source validation/hopper/gpu_env.sh
microbench_twice 150 field_count_rates dram_scale_gbs field_count_rates
grep "^===" "$LOG"
