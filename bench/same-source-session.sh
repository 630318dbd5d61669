#!/usr/bin/env bash
# tawa against Triton 3.6 compiling the same kernel source, and cuBLAS, in
# one process per example (bench/same_source.py), on the GEMM cases of
# issues 10 and 11; a markdown table and JSON lines in $1 (default
# ./same-source): same_source.md, same_source.jsonl. Run from the
# checkout's root on the GPU machine after bench/build-gpu-bin.sh (carry
# gpu-bin/); installs the `tawa` wheel as bench/python-session.sh does
# (bench/tawa-wheel.sh). The runs below go through
# bench/variants-session.sh, one round, with TAWA_FLAGS (default none)
# as every run's flags.
#
# Knobs: ITERS (timed rounds per case, default 30), TAWA_UPSTREAM_DIR (the
# Triton tutorials, for the unmodified sources of tutorials 03, 08 and 09; default
# ./upstream; skipped with a status line when absent), ONLY (a regular
# expression on the run names below, e.g. "matmul|linear"),
# EXAMPLE_TIMEOUT (seconds per example process, default 120), BUDGET
# (seconds for all of them, default 540, under the device tool's 10
# minutes a command: an example that would start past it is skipped, and
# a running one is stopped at it, so that the table is always written).
# COOLDOWN_MS (the GPU left idle that long before each timed call,
# default 0: back to back). Back to back, the large GEMMs run at the
# clock the power cap leaves, one for all the sides of a process (CLOCKS=1
# reports it), which a kernel that draws more power lowers for all; with
# COOLDOWN_MS=30 every call starts from an idle GPU and the ratios compare
# the kernels at full clocks.
# SUSTAINED_S (default 0): also each side called back to back for about
# that many seconds, in three turns, with joules a call (`same_source.py
# --sustained`): what a loop calling one kernel sees under the cap.
set -uo pipefail
out=${1:-same-source}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TAWA_UPSTREAM_DIR=${TAWA_UPSTREAM_DIR:-$PWD/upstream}

ex=triton-examples/kernels
up=tests/upstream
up03=$up/03-matrix-multiplication.toml
# name | kernel file | cases file ("-": beside it) | cases
runs=(
  "matmul|$ex/matmul.py|-|square_4096 square_8192 bf16_8192 k1024_8192 k16384_8192"
  "tutorial03|$TAWA_UPSTREAM_DIR/03-matrix-multiplication.py|$up03|square_4096 square_8192"
  "persistent_matmul|$ex/persistent_matmul.py|-|square_4096 square_8192"
  "matmul_descriptor|$ex/matmul_descriptor.py|-|square_4096 square_8192"
  "matmul_tma_host|$ex/matmul_tma_host.py|-|square_8192"
  "glu_dual_gemm_unmasked|$ex/glu_dual_gemm_unmasked.py|-|ffn_4096x11008"
  "geglu_dual_gemm|$ex/geglu_dual_gemm.py|-|ffn_4096x11008"
  "batched_matmul|$ex/batched_matmul.py|-|attention_scores_32x512 batch_4_2048"
  "split_k_matmul|$ex/split_k_matmul.py|-|skinny_1024x1024x16384"
  "linear|$ex/linear.py|-|square_8192"
  "weight_grad|$ex/weight_grad.py|-|tokens_8192"
  "gemm_row_reduce|$ex/gemm_row_reduce.py|-|square_4096"
  "persistent_matmul_clamped|$ex/persistent_matmul_clamped.py|-|square_4096"
  "matmul_subtiled_epilogue|$ex/matmul_subtiled_epilogue.py|-|square_4096"
  "matmul_swap_ab|$ex/matmul_swap_ab.py|-|decode_16x8192x8192"
  "tutorial08|$TAWA_UPSTREAM_DIR/08-grouped-gemm.py|$up/08-grouped-gemm.toml|four_square_1024"
  "tutorial08_tma|$TAWA_UPSTREAM_DIR/08-grouped-gemm.py|$up/08-grouped-gemm--tma.toml|four_square_1024"
  "tutorial09_naive|$TAWA_UPSTREAM_DIR/09-persistent-matmul.py|$up/09-persistent-matmul--naive.toml|square_8192"
  "tutorial09_persistent|$TAWA_UPSTREAM_DIR/09-persistent-matmul.py|$up/09-persistent-matmul.toml|square_8192"
  "tutorial09_tma|$TAWA_UPSTREAM_DIR/09-persistent-matmul.py|$up/09-persistent-matmul--tma.toml|square_8192"
  "tutorial09_tma_persistent|$TAWA_UPSTREAM_DIR/09-persistent-matmul.py|$up/09-persistent-matmul--tma-persistent.toml|square_8192 square_8192_subtiled"
  "tutorial09_descriptor|$TAWA_UPSTREAM_DIR/09-persistent-matmul.py|$up/09-persistent-matmul--descriptor.toml|square_8192"
)
variants="$out/runs.txt"
: > "$variants"
: > "$out/status.txt"
for r in "${runs[@]}"; do
  IFS='|' read -r name file cases_file cases <<< "$r"
  [[ -z "${ONLY:-}" || "$name" =~ ${ONLY:-} ]] || continue
  if [ ! -f "$file" ]; then
    echo "$name skipped: no $file" >> "$out/status.txt"
    continue
  fi
  echo "$name|$file|$cases_file|$cases|${TAWA_FLAGS:-}" >> "$variants"
done
ROUNDS=1 ITERS=${ITERS:-30} LINE_TIMEOUT=${EXAMPLE_TIMEOUT:-120} STEM=same_source \
  bash bench/variants-session.sh "$variants" "$out"
