#!/usr/bin/env bash
# The Python package's GPU session: installs the `tawa` wheel from gpu-bin/
# (bench/build-gpu-bin.sh) into a virtual environment that sees the
# machine's torch and triton, runs the Triton tutorials through it
# (gpu-bin/python-test, tests/python_tutorials.rs) and the benchmark of
# tawa against Triton and PyTorch on the tutorials' own shapes
# (bench/python_tutorials.py). Run from the checkout's root on the GPU
# machine; logs and the table go to $1 (default ./python-logs).
#
# Knobs: TAWA_UPSTREAM_DIR (the tutorials; default ./upstream),
# TAWA_TUTORIALS (e.g. 01,02), TAWA_TUTORIAL_TIMEOUT (s per tutorial,
# default 300), TAWA_BENCH_MAX_POINTS (benchmark x values per tutorial
# table in the suite, default 3), SUITE=0 / BENCH=0 to skip a part,
# BENCH_ARGS (extra arguments of bench/python_tutorials.py).
set -uo pipefail
out=${1:-python-logs}
mkdir -p "$out"
log="$out/session.log"
status() { echo "$1" | tee -a "$out/status.txt" >> "$log"; }
export TAWA_UPSTREAM_DIR=${TAWA_UPSTREAM_DIR:-$PWD/upstream}
# NVRTC: the project-local tools when they were carried (the installed
# extension does not sit inside the checkout, so name them).
[ -d .tools/cuda ] && export TAWA_CUDA_TOOLS=${TAWA_CUDA_TOOLS:-$PWD/.tools/cuda}
export TAWA_PY_CACHE_DIR=${TAWA_PY_CACHE_DIR:-/tmp/tawa-py-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$log" 2>&1

venv=/tmp/tawa-venv
python3 -m venv --system-site-packages "$venv" >> "$log" 2>&1
"$venv/bin/pip" install -q --no-deps --force-reinstall gpu-bin/tawa-*.whl >> "$log" 2>&1
status "install rc=$?"
"$venv/bin/python" -c "import torch, triton, tawa; print('torch', torch.__version__, 'triton', triton.__version__, 'tawa', tawa._tawa.__version__ if hasattr(tawa, '_tawa') else '')" >> "$log" 2>&1

if [ "${SUITE:-1}" != 0 ]; then
  TAWA_PYTHON="$venv/bin/python" TAWA_GPU_LOG="$out/tutorials.log" \
    TAWA_TUTORIAL_TIMEOUT=${TAWA_TUTORIAL_TIMEOUT:-300} \
    timeout ${SUITE_TIMEOUT:-2400} gpu-bin/python-test --ignored --nocapture >> "$log" 2>&1
  status "tutorials rc=$?"
fi
if [ "${BENCH:-1}" != 0 ]; then
  timeout ${BENCH_TIMEOUT:-540} "$venv/bin/python" bench/python_tutorials.py --upstream "$TAWA_UPSTREAM_DIR" \
    --out "$out/python_tutorials.md" ${BENCH_ARGS:-} >> "$log" 2>&1
  status "bench rc=$?"
fi
cat "$out/status.txt"
