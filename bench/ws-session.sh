#!/usr/bin/env bash
# The warp-specialization GPU session (issue 4), with prebuilt binaries in
# gpu-bin/ (bench/build-gpu-bin.sh); everything goes to $1/session.log:
#
# 1. racecheck: RACECHECK="example:case[:flags] ..." runs those cases under
#    compute-sanitizer's racecheck (nonzero status on a hazard); flags are
#    `+`-separated (`matmul:ragged_100:--no-ws+--num-stages+4`);
# 2. the GPU suite (every case, memcheck on the small ones), limited by
#    SUITE_FILTER (comma-separated `example/case` substrings) when set,
#    to every n-th run from the i-th by SUITE_SHARD=i/n (`1/2`, then
#    `2/2` in another call, where a call cannot hold the whole suite),
#    and stopped at SUITE_TIMEOUT seconds (default 560: the whole suite
#    took about 470 s on an H100 in November 2026, and more than 540 s at
#    its end);
# 3. the GEMM table of bench/RESULTS.md: matmul from the pointer-arithmetic
#    source at 4096^3, 8192^3 and M = N = 8192 with K = 1024 and 16384,
#    warp-specialized (the pipeliner's defaults) and with --no-ws, against
#    cuBLAS in the same run; then 8192^3 with each flag set of VARIANTS
#    (`|`-separated, default "--mma-depth 1|--aref-depth 3|--no-persistent|--no-tma-store"); BENCH=0
#    skips this step;
# 4. tawa (the `tawa` wheel, installed as bench/python-session.sh does)
#    and Triton compiling the same kernel source on the same cases, with
#    cuBLAS, in one process (bench/same_source.py; needs torch and triton;
#    bench/same-source-session.sh runs it on every GEMM example);
#    TRITON=0 skips it.
# 5. the Python drop-in (bench/python-session.sh without its benchmark):
#    the `tawa` package's tests and the Triton tutorials run through it,
#    when the tutorials are in TAWA_UPSTREAM_DIR (default ./upstream);
#    PYTHON=0 skips it.
set -uo pipefail
out=${1:-gpu-logs}
mkdir -p "$out"
log="$out/session.log"
export TAWA_EXAMPLES_DIR=$PWD/triton-examples/kernels
export TAWA_BIN=$PWD/gpu-bin/tawa-rs
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
cases=${CASES:-"--case square_4096 --case square_8192 --case k1024_8192 --case k16384_8192"}
status() { echo "$1" | tee -a "$out/status.txt" >> "$log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$log" 2>&1

san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for ec in ${RACECHECK:-}; do
  IFS=':' read -r ex case flags <<< "$ec"
  echo "== racecheck ${ec}" >> "$log"
  timeout 90 "$san" --tool racecheck --racecheck-report hazard --error-exitcode 1 \
    gpu-bin/tawa-rs run triton-examples/kernels/$ex.py --case $case ${flags//+/ } >> "$log" 2>&1
  status "racecheck $ec rc=$?"
done

if [ "${SUITE:-1}" = 1 ]; then
  TAWA_GPU_LOG="$out/gpu.log" TAWA_GPU_TIMEOUT=${TAWA_GPU_TIMEOUT:-90} \
    TAWA_GPU_FILTER=${SUITE_FILTER:-} TAWA_GPU_SHARD=${SUITE_SHARD:-1/1} \
    timeout ${SUITE_TIMEOUT:-560} gpu-bin/gpu-test --ignored --nocapture >> "$log" 2>&1
  status "suite rc=$?"
fi

if [ "${BENCH:-1}" = 1 ]; then
for mode in "" "--no-ws"; do
  echo "== matmul ${mode:-(warp-specialized)}" >> "$log"
  timeout ${BENCH_TIMEOUT_GEMM:-150} gpu-bin/tawa-rs bench triton-examples/kernels/matmul.py $cases \
    --iters ${ITERS:-100} $mode >> "$log" 2>&1
  status "bench matmul $mode rc=$?"
done
IFS='|' read -ra variants <<< "${VARIANTS---mma-depth 1|--aref-depth 3|--no-persistent|--no-tma-store}"
for v in "${variants[@]}"; do
  echo "== matmul $v" >> "$log"
  timeout 60 gpu-bin/tawa-rs bench triton-examples/kernels/matmul.py --case square_8192 \
    --iters ${ITERS:-100} $v >> "$log" 2>&1
  status "bench matmul $v rc=$?"
done
fi

if [ "${TRITON:-1}" = 1 ]; then
  echo "== tawa and Triton, same source, one process" >> "$log"
  . bench/tawa-wheel.sh
  install_tawa_wheel "$log"
  status "tawa wheel install rc=$wheel_rc"
  timeout ${TRITON_TIMEOUT:-240} python3 bench/same_source.py triton-examples/kernels/matmul.py \
    $cases --iters ${ITERS:-100} >> "$log" 2>&1
  status "same source matmul rc=$?"
fi
if [ "${PYTHON:-1}" = 1 ]; then
  if [ -d "${TAWA_UPSTREAM_DIR:-$PWD/upstream}" ]; then
    echo "== python drop-in (details in $out/python/)" >> "$log"
    # SUITE here is the GPU suite's switch, not the drop-in's tutorials.
    SUITE=1 BENCH=0 bash bench/python-session.sh "$out/python" >> "$log" 2>&1
    status "python rc=$?"
  else
    status "python skipped: no tutorials in ${TAWA_UPSTREAM_DIR:-$PWD/upstream}"
  fi
fi
cat "$out/status.txt"
