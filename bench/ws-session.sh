#!/usr/bin/env bash
# The warp-specialization GPU session (issue 4): the GEMM table of
# bench/RESULTS.md — matmul from the pointer-arithmetic source at 4096^3,
# 8192^3 and M = N = 8192 with K = 1024 and 16384, warp-specialized and with
# --no-ws, against cuBLAS in the same run — then the GPU suite (every
# example and case, memcheck on the small ones). Prebuilt binaries in
# gpu-bin/ (bench/build-gpu-bin.sh). Everything goes to $1/session.log.
# SUITE_FILTER limits the suite to cases whose `example/case` contains it;
# RACECHECK="example:case ..." runs those cases under compute-sanitizer's
# racecheck first.
set -uo pipefail
out=${1:-gpu-logs}
mkdir -p "$out"
log="$out/session.log"
export TAWA_EXAMPLES_DIR=$PWD/triton-examples/kernels
export TAWA_BIN=$PWD/gpu-bin/tawa-rs
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$log" 2>&1
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for ec in ${RACECHECK:-}; do
  echo "== racecheck ${ec}" >> "$log"
  timeout 120 "$san" --tool racecheck --racecheck-report hazard --error-exitcode 1 gpu-bin/tawa-rs run \
    triton-examples/kernels/${ec%%:*}.py --case ${ec#*:} >> "$log" 2>&1
  echo "racecheck $ec rc=$?" | tee -a "$out/status.txt" >> "$log"
done
cases="--case square_4096 --case square_8192 --case k1024_8192 --case k16384_8192"
for mode in "" "--no-ws"; do
  echo "== matmul ${mode:-(warp-specialized)}" >> "$log"
  timeout ${BENCH_TIMEOUT_GEMM:-150} gpu-bin/tawa-rs bench triton-examples/kernels/matmul.py $cases \
    --iters ${ITERS:-100} $mode >> "$log" 2>&1
  echo "bench matmul $mode rc=$?" | tee -a "$out/status.txt" >> "$log"
done
if [ "${SUITE:-1}" = 1 ]; then
  TAWA_GPU_TESTS=1 TAWA_GPU_LOG="$out/gpu.log" TAWA_GPU_TIMEOUT=${TAWA_GPU_TIMEOUT:-90} \
    TAWA_GPU_FILTER=${SUITE_FILTER:-} \
    timeout ${SUITE_TIMEOUT:-300} gpu-bin/gpu-test --nocapture >> "$log" 2>&1
  echo "suite rc=$?" | tee -a "$out/status.txt" >> "$log"
fi
cat "$out/status.txt"
