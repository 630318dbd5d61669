#!/usr/bin/env bash
# The Python package's GPU session: installs the `tawa` wheel from gpu-bin/
# (bench/build-gpu-bin.sh) beside the machine's torch and triton, runs the Triton tutorials through it
# (gpu-bin/python-test, tests/python_tutorials.rs) and the benchmark of
# tawa against Triton and PyTorch on the tutorials' own shapes
# (bench/python_tutorials.py). Run from the checkout's root on the GPU
# machine; logs and the table go to $1 (default ./python-logs).
#
# Knobs: TAWA_UPSTREAM_DIR (the tutorials; default ./upstream),
# TAWA_TUTORIALS (e.g. 01,02), TAWA_TUTORIAL_TIMEOUT (s per tutorial,
# default 240), TAWA_BENCH_MAX_POINTS (benchmark x values per tutorial
# table in the suite, default 3), UNIT=0 / SUITE=0 / BENCH=0 to skip a part,
# BENCH_ARGS (arguments of bench/python_tutorials.py, e.g. "--only 01,02
# --points 3"), SUITE_TIMEOUT / BENCH_TIMEOUT (default 560 s each, under
# the device tool's 10 minutes a command: split longer runs with
# TAWA_TUTORIALS and --only).
set -uo pipefail
out=${1:-python-logs}
mkdir -p "$out"
log="$out/session.log"
status() { echo "$1" | tee -a "$out/status.txt" >> "$log"; }
export TAWA_UPSTREAM_DIR=${TAWA_UPSTREAM_DIR:-$PWD/upstream}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$log" 2>&1

. bench/tawa-wheel.sh
install_tawa_wheel "$log"
status "install rc=$wheel_rc"

# The package's own tests, the GPU ones included (python/tests/test_gpu.py).
if [ "${UNIT:-1}" != 0 ]; then
  (cd python/tests && timeout 300 python3 -m pytest -q -p no:cacheprovider) >> "$log" 2>&1
  status "python tests rc=$?"
fi

if [ "${SUITE:-1}" != 0 ]; then
  TAWA_PYTHON=python3 TAWA_GPU_LOG="$out/tutorials.log" \
    TAWA_TUTORIAL_TIMEOUT=${TAWA_TUTORIAL_TIMEOUT:-240} \
    timeout ${SUITE_TIMEOUT:-560} gpu-bin/python-test --ignored --nocapture >> "$log" 2>&1
  status "tutorials rc=$?"
fi
if [ "${BENCH:-1}" != 0 ]; then
  timeout ${BENCH_TIMEOUT:-560} python3 bench/python_tutorials.py --upstream "$TAWA_UPSTREAM_DIR" \
    --out "$out/python_tutorials.md" ${BENCH_ARGS:-} >> "$log" 2>&1
  status "bench rc=$?"
fi
cat "$out/status.txt"
# Non-zero when a step failed, for the GPU session that runs this one.
! grep -Ev "rc=(0|unzipped:0)$" "$out/status.txt" > /dev/null
