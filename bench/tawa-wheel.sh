# Sourced by the GPU sessions that run the `tawa` Python package
# (bench/python-session.sh, bench/same-source-session.sh,
# bench/ws-session.sh): `install_tawa_wheel LOG` installs the wheel
# bench/build-gpu-bin.sh put into gpu-bin/ into a folder of its own,
# /tmp/tawa-site, and puts that folder first on PYTHONPATH, so that the
# machine's Python keeps its torch and triton and needs neither venv nor
# network. Sets `wheel_rc` (0, or `unzipped:N` where pip refused the
# wheel's platform tag) and logs the versions it imports to LOG.
install_tawa_wheel() {
  local log=$1 site=/tmp/tawa-site
  # NVRTC: the project-local tools when they were carried (the installed
  # extension does not sit inside the checkout, so name them).
  [ -d .tools/cuda ] && export TAWA_CUDA_TOOLS=${TAWA_CUDA_TOOLS:-$PWD/.tools/cuda}
  export TAWA_PY_CACHE_DIR=${TAWA_PY_CACHE_DIR:-/tmp/tawa-py-cache}
  rm -rf "$site"
  python3 -m pip install -q --no-deps --target "$site" gpu-bin/tawa-*.whl >> "$log" 2>&1
  wheel_rc=$?
  # A wheel is a zip: where pip refuses its platform tag (an older glibc
  # than the build machine's), unpacking it installs the same files.
  [ $wheel_rc = 0 ] || { python3 -m zipfile -e gpu-bin/tawa-*.whl "$site" >> "$log" 2>&1; wheel_rc="unzipped:$?"; }
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  python3 -c "import torch, triton, tawa, tawa._tawa as t; print('torch', torch.__version__, 'triton', triton.__version__, 'tawa', t.__version__, t.__file__)" >> "$log" 2>&1
}
