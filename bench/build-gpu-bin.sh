#!/usr/bin/env bash
# Builds what bench/gpu-session.sh runs on a GPU machine without cargo:
# the release `tawa-rs`, the GPU suite's test binary and the runtime's GPU
# probes, stripped (the device tool carries at most 64 MiB) into gpu-bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin tawa-rs
# The path of a test binary: the last "Executable" line cargo prints for it.
test_binary() {
  cargo test --release "$@" --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4
}
gpu_test=$(test_binary --test gpu)
runtime_test=$(test_binary -p tawa-backend --test runtime)
rm -rf gpu-bin && mkdir gpu-bin
cp target/release/tawa-rs gpu-bin/tawa-rs
cp "$gpu_test" gpu-bin/gpu-test
cp "$runtime_test" gpu-bin/runtime-test
strip gpu-bin/*
ls -la gpu-bin
