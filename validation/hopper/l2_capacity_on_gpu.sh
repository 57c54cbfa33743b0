#!/bin/bash
# The L2 capacity curves (microbench.py --only l2_capacity_curves): read bandwidth by data volume with parts of
# their own and parts shared by two blocks far apart, twice. From the repository root on the lent GPU with .whl
# carried; about a minute.
set -u
source validation/hopper/gpu_env.sh
microbench_twice 120 l2_capacity_curves l2_capacity_curves
grep "^===" "$LOG"
