# Sourced by the scripts here: the packages the lent GPU image lacks (wheels in .whl/), the caches in
# /tmp, a log in $OUT that starts with the GPU, its clocks and the software versions, and `step`.
OUT=${OUT:-/tmp/hopper_out}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export PYSTENCILS_CACHE_DIR=/tmp/pystencils_cache PYSTENCILS_PERF_TUNING_DIR=/tmp/tuning
LOG=$OUT/log.txt
{
  date -u
  nvidia-smi
  nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n '/Clocks$/,/SM Clock Samples/p'
  command -v nvcc ncu
  python3 -c "import cupy, pystencils, lbmpy, sympy; print('cupy', cupy.__version__, 'pystencils', pystencils.__version__, 'lbmpy', lbmpy.__version__, 'sympy', sympy.__version__)"
} >"$LOG" 2>&1
DEVICE=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
PP="python3 -m pystencils_perf.cli"
# Nsight Compute: on PATH, or where its installer puts it
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
FOLDS=1x1x1,1x2x1,1x1x2

step() {  # step SECONDS NAME COMMAND...: one measurement, its output in the log, never longer than SECONDS
  local seconds=$1 name=$2
  shift 2
  echo "=== $name: $*" >>"$LOG"
  local start=$SECONDS
  timeout "$seconds" "$@" >>"$LOG" 2>&1
  echo "=== $name: rc $? after $((SECONDS - start)) s" >>"$LOG"
}

microbench_twice() {  # microbench_twice SECONDS NAME FIGURE...: the figures twice, into $OUT/NAME_1.json and
  # $OUT/NAME_2.json (each step never longer than SECONDS), then the two runs side by side
  local seconds=$1 name=$2 run
  shift 2
  for run in 1 2; do
    step "$seconds" "${name}_$run" python3 validation/hopper/microbench.py --only "$@" --json "$OUT/${name}_$run.json"
  done
  python3 validation/hopper/side_by_side.py "$OUT/${name}_1.json" "$OUT/${name}_2.json"
}

timed_twice_and_counted() {  # timed_twice_and_counted NAME SPEC [MEASURE OPTION...]: SPEC timed twice, into
  # $OUT/NAME.csv and $OUT/NAME_rerun.csv, then its volumes read with ncu, into $OUT/NAME_ncu.csv
  local name=$1 spec=$2
  shift 2
  step 150 "$name" $PP measure "$spec" --device "$DEVICE" "$@" --repeats 15 --out "$OUT/$name.csv"
  step 150 "${name}_rerun" $PP measure "$spec" --device "$DEVICE" "$@" --repeats 15 --out "$OUT/${name}_rerun.csv"
  step 200 "${name}_ncu" $PP measure "$spec" --device "$DEVICE" "$@" --ncu --ncu-path "$NCU" --out "$OUT/${name}_ncu.csv"
}
