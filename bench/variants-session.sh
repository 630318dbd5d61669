#!/usr/bin/env bash
# Compiler-flag variants of GEMM cases, each against Triton 3.6 compiling
# the same source and cuBLAS in the same process (bench/same_source.py):
# the way a schedule is measured before it becomes a default.
#
#   bash bench/variants-session.sh VARIANTS OUT
#
# VARIANTS holds one run a line, `label | kernel file | cases file ("-":
# beside the kernel) | cases | tawa-rs flags` (blank lines and `#`
# comments skipped), e.g.
#
#   mm-base  | triton-examples/kernels/matmul.py | - | square_8192 |
#   mm-merge | triton-examples/kernels/matmul.py | - | square_8192 | --slot-merge 2
#
# (`$TAWA_UPSTREAM_DIR` in a kernel file's path is that directory, default
# ./upstream: the Triton tutorials, with tests/upstream/*.toml cases);
# Each line runs in a process of its own, with the flags as TAWA_FLAGS
# (words of the form NAME=VALUE among them set that variable instead,
# e.g. `TAWA_WAVE_BALANCE=0`)
# and a TAWA_PY_CACHE_DIR of its own (so no variant reuses another's
# kernels), ROUNDS times (default 2) with the lines interleaved round by
# round, so that a drift of the clocks does not favour one. The markdown
# table and JSON lines land in OUT (one row per line and round). Run from
# the checkout's root on the GPU machine after bench/build-gpu-bin.sh
# (carry gpu-bin/). Knobs: ITERS (timed rounds per case, default 20),
# COOLDOWN_MS (the GPU left idle that long before each timed call,
# `same_source.py --cooldown-ms`; default 0), SUSTAINED_S (seconds of
# back-to-back calls a side and turn after the timing, `--sustained`;
# default 0: none), CLOCKS=1 (each side's SM clock during its timed calls
# and its cycles a call, `--clocks`),
# LINE_TIMEOUT (seconds per process, default 120), BUDGET (seconds in
# all, default 540: a line that would start past it is skipped, and a
# running one is stopped at it, so that the table is always written),
# STEM (the output files' name, default variants: OUT/STEM.md,
# OUT/STEM.jsonl).
set -uo pipefail
variants=$1
out=${2:-variants}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log="$out/session.log"
jsonl="$out/${STEM:-variants}.jsonl"
: > "$jsonl"
status() { echo "$1" | tee -a "$out/status.txt" >> "$log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$log" 2>&1

. bench/tawa-wheel.sh
install_tawa_wheel "$log"
status "install rc=$wheel_rc"

mapfile -t lines < <(grep -Ev '^[[:space:]]*(#|$)' "$variants")
started=$SECONDS
for round in $(seq "${ROUNDS:-2}"); do
  for line in "${lines[@]}"; do
    IFS='|' read -r label file cases_file cases flags <<< "$line"
    read -r label <<< "$label"
    read -r file <<< "$file"
    file=${file//'$TAWA_UPSTREAM_DIR'/${TAWA_UPSTREAM_DIR:-$PWD/upstream}}
    read -r cases_file <<< "$cases_file"
    args=(--label "$label" --iters "${ITERS:-20}" --json "$jsonl" --cooldown-ms "${COOLDOWN_MS:-0}" --sustained "${SUSTAINED_S:-0}")
    [ "${CLOCKS:-0}" = 1 ] && args+=(--clocks)
    [ "$cases_file" = - ] || args+=(--cases-file "$cases_file")
    for c in $cases; do args+=(--case "$c"); done
    left=$(( ${BUDGET:-540} - (SECONDS - started) ))
    if [ "$left" -le 10 ]; then
      status "$label round $round skipped: the budget (BUDGET=${BUDGET:-540} s) is spent"
      continue
    fi
    limit=$(( left < ${LINE_TIMEOUT:-120} ? left : ${LINE_TIMEOUT:-120} ))
    echo "== $label round $round, flags '$flags' ($((SECONDS - started)) s, at most $limit s)" >> "$log"
    # NAME=VALUE words of the flags are the line's environment (launch
    # knobs such as TAWA_WAVE_BALANCE=0), the rest its TAWA_FLAGS.
    envs=(); words=()
    for w in $flags; do
      if [[ $w == *=* && $w != -* ]]; then envs+=("$w"); else words+=("$w"); fi
    done
    env "${envs[@]}" TAWA_FLAGS="${words[*]}" TAWA_PY_CACHE_DIR="/tmp/tawa-variants-cache/$label" \
      timeout "$limit" python3 bench/same_source.py "$file" "${args[@]}" >> "$log" 2>&1
    status "$label round $round rc=$?"
  done
done
echo "== $((SECONDS - started)) s in all" >> "$log"
python3 bench/same_source.py --report "$jsonl" --out "$out/${STEM:-variants}.md" >> "$log" 2>&1
status "report rc=$?"
cat "$out/${STEM:-variants}.md" 2>/dev/null
cat "$out/status.txt"
! grep -Ev "rc=(0|unzipped:0)$" "$out/status.txt" > /dev/null
