#!/usr/bin/env bash
# Builds what bench/gpu-session.sh and bench/python-session.sh run on a GPU
# machine without cargo: the release `tawa-rs`, the GPU suite's test binary,
# the runtime's GPU probes and the Python tutorials' test, stripped (the
# device tool carries at most 64 MiB), and the `tawa` Python wheel (abi3,
# installed there with `pip install --no-deps`) into gpu-bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin tawa-rs
# The path of a test binary: the last test executable cargo reports for
# it. Test harnesses live in target/release/deps; a test that runs the
# tawa-rs binary (CARGO_BIN_EXE_tawa-rs) makes cargo report that binary
# too, after the test, which must not be taken for it.
test_binary() {
  cargo test --release "$@" --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/deps/[^"]*"' | tail -1 | cut -d'"' -f4
}
gpu_test=$(test_binary --test gpu)
runtime_test=$(test_binary -p tawa-backend --test runtime)
python_test=$(test_binary --test python_tutorials)
rm -rf gpu-bin && mkdir gpu-bin
cp target/release/tawa-rs gpu-bin/tawa-rs
cp "$gpu_test" gpu-bin/gpu-test
cp "$runtime_test" gpu-bin/runtime-test
cp "$python_test" gpu-bin/python-test
strip gpu-bin/tawa-rs gpu-bin/gpu-test gpu-bin/runtime-test gpu-bin/python-test
# The wheel: maturin from PyPI in the project-local .tools/py (as CI).
[ -x .tools/py/bin/maturin ] || { python3 -m venv .tools/py && .tools/py/bin/pip install -q 'maturin>=1.5,<2'; }
VIRTUAL_ENV="$PWD/.tools/py" .tools/py/bin/maturin build -m python/Cargo.toml --locked --release --strip \
  -i .tools/py/bin/python -o gpu-bin
ls -la gpu-bin
