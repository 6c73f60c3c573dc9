#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first thing to run on a fresh machine: installs what is missing, builds the quickstart example
# (examples/quickstart.cpp) and runs it.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tprod_configure -DTPROD_BUILD_EXAMPLES=ON
cmake --build "$build_dir" --target quickstart -j "$jobs"
"$build_dir/examples/quickstart"
