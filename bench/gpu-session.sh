#!/usr/bin/env bash
# One GPU session: the GPU suite (every example and case, memcheck on the
# small ones) and the benchmark table of bench/RESULTS.md, with prebuilt
# binaries in gpu-bin/ (see README, "The GPU suite"). Logs go to $1
# (default: ./gpu-logs): everything in session.log, the suite's summary
# also in gpu.log (few files: the device tool returns only a handful).
# Run from the checkout's root on the GPU machine.
set -uo pipefail
out=${1:-gpu-logs}
mkdir -p "$out"
export TAWA_EXAMPLES_DIR=$PWD/triton-examples/kernels
export TAWA_BIN=$PWD/gpu-bin/tawa-rs
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
log="$out/session.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$log" 2>&1
status() { echo "$1" | tee -a "$out/status.txt" >> "$log"; }

# Benchmarks first: they are short and what the results log needs.
for ex in vector_add fused_softmax layer_norm_fwd; do
  timeout ${BENCH_TIMEOUT:-60} gpu-bin/tawa-rs bench triton-examples/kernels/$ex.py --iters ${ITERS:-100} \
    >> "$log" 2>&1; status "bench $ex rc=$?"
done
timeout ${BENCH_TIMEOUT_GEMM:-90} gpu-bin/tawa-rs bench triton-examples/kernels/matmul.py --case square_4096 --iters ${ITERS:-100} \
  >> "$log" 2>&1; status "bench matmul rc=$?"

# The runtime's GPU probes (saxpy launch, TMA copy + swizzle), when their
# test binary was carried (`cargo test --release -p tawa-backend --test
# runtime --no-run`, copied to gpu-bin/runtime-test). One at a time: a
# probe that traps (a failing cluster probe) poisons the context the
# others would share.
if [ -x gpu-bin/runtime-test ]; then
  timeout 120 gpu-bin/runtime-test --ignored gpu_ --nocapture --test-threads=1 >> "$log" 2>&1
  status "runtime probes rc=$?"
fi

# The suite: one process per case under a watchdog.
TAWA_GPU_LOG="$out/gpu.log" TAWA_GPU_TIMEOUT=${TAWA_GPU_TIMEOUT:-90} \
  timeout ${SUITE_TIMEOUT:-300} gpu-bin/gpu-test --ignored --nocapture >> "$log" 2>&1
status "suite rc=$?"
cat "$out/status.txt"
