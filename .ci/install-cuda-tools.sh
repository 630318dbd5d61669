#!/usr/bin/env bash
# Installs CUDA 13.0's NVRTC (libnvrtc.so.13 + its builtins) and ptxas from
# NVIDIA's PyPI wheels into the project-local, gitignored folder .tools/cuda,
# so the compile checks of generated kernels run without a
# CUDA toolkit or a GPU. Idempotent: does nothing when both tools are there.
#
# Only the two wheels are fetched, without their dependencies, and only
# libnvrtc (+ builtins), nvrtc.h and ptxas are unpacked (about 150 MB instead
# of 330): nvcc's host toolchain (nvvm, crt, nvlink, ...) is not needed.
# The wheels are unpacked with Python's zipfile (not `pip install --target`)
# so that a rerun after a partial install never trips over pip's refusal to
# merge into an existing `nvidia/` folder, and so executable bits survive.
# The downloaded wheels are deleted afterwards (pip's own cache keeps them).
#
# Usage: .ci/install-cuda-tools.sh [DEST]   (DEST defaults to .tools/cuda)
# Prints the paths of libnvrtc and ptxas on its last two lines.
set -euo pipefail
cd "$(dirname "$0")/.."

dest="${1:-.tools/cuda}"
wheels=".tools/cuda-wheels"
# Pinned to one release so that every machine compiles with the same NVRTC
# (the compile cache is keyed by NVRTC's version anyway).
version="13.0.88"
pkgs=("nvidia-cuda-nvrtc==${version}" "nvidia-cuda-nvcc==${version}")

find_tools() {
    nvrtc="$(find "$dest" -name 'libnvrtc.so.*' -not -name '*alt*' -not -name '*builtins*' 2>/dev/null | sort | head -n1 || true)"
    ptxas="$(find "$dest" -name ptxas -type f 2>/dev/null | sort | head -n1 || true)"
}

find_tools
if [[ -n "$nvrtc" && -n "$ptxas" && -x "$ptxas" ]]; then
    echo "CUDA tools already installed in $dest"
else
    python="$(command -v python3 || command -v python || true)"
    if [[ -z "$python" ]]; then
        echo "error: python3 (with pip) is needed to fetch the CUDA wheels" >&2
        exit 1
    fi
    mkdir -p "$wheels" "$dest"
    echo "Fetching ${pkgs[*]} into $wheels"
    "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3 \
        -d "$wheels" "${pkgs[@]}"
    echo "Unpacking into $dest"
    "$python" - "$dest" "$wheels"/nvidia_cuda_nvrtc-"$version"-*.whl "$wheels"/nvidia_cuda_nvcc-"$version"-*.whl <<'PY'
import os, sys, zipfile
dest, wheels = sys.argv[1], sys.argv[2:]
for wheel in wheels:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            name = info.filename.rsplit("/", 1)[-1]
            wanted = (
                name == "ptxas"
                or name == "nvrtc.h"
                or name.startswith("libnvrtc.so.")
                or name.startswith("libnvrtc-builtins.so.")
            )
            if info.is_dir() or ".dist-info/" in info.filename or not wanted:
                continue
            path = z.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)
PY
    rm -rf "$wheels"
    find_tools
    if [[ -z "$nvrtc" || -z "$ptxas" ]]; then
        echo "error: the wheels did not contain libnvrtc.so.* and ptxas" >&2
        exit 1
    fi
fi
echo "libnvrtc: $(cd "$(dirname "$nvrtc")" && pwd)/$(basename "$nvrtc")"
echo "ptxas:    $(cd "$(dirname "$ptxas")" && pwd)/$(basename "$ptxas")"
