#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first thing to run on a fresh machine: installs what is missing, builds the quickstart example
# (examples/quickstart.cpp) and runs it, then the Python package and its quickstart (examples/quickstart.py).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tprod_configure -DTPROD_BUILD_EXAMPLES=ON "${measured_build[@]}"
cmake --build "$build_dir" --target quickstart -j "$jobs"
"$build_dir/examples/quickstart"
# The same from Python (NumPy arrays in and out) and a PyTorch model with an L-linear layer (examples/quickstart.py).
if [[ "${TPROD_BUILD_PYTHON:-ON}" != OFF ]]; then
  cmake --build "$build_dir" --target tprod_python -j "$jobs"
  PYTHONPATH="$build_dir/python" "$python" "$repo_root/examples/quickstart.py"
fi
