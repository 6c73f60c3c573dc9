#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer checks that CI runs: the library's test programs built and run under AddressSanitizer and
# UndefinedBehaviorSanitizer (LeakSanitizer on), and the concurrency tests under ThreadSanitizer; any report fails
# (the sanitizers abort the program, and CTest counts it as failed). The test programs, not the examples' runs:
# every public header is reached by one of them. The CUDA and MPI parts are left out (a sanitizer runtime does not
# see into the GPU, and Open MPI's own allocations are reported as leaks).
# Settings (environment): TPROD_JOBS (default 2). Builds in build/asan and build/tsan (the CMake presets).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/install-deps.sh"

# One program per area of include/tprod (tests/<area>/), and the program's tests.
asan_targets=(test_core test_transform test_algebra test_backend test_decomp test_graph test_io test_nn test_cli
              test_concurrency)
asan_tests='^(core|transform|algebra|backend|decomp|graph|io|nn|cli|concurrency)$'
common=(-DTPROD_ENABLE_CUDA=OFF -DTPROD_ENABLE_MPI=OFF -DTPROD_UNITY_BUILD=ON -DTPROD_INSTANCES_OPTIMIZATION=-O1)

echo "== AddressSanitizer + UndefinedBehaviorSanitizer: ${asan_targets[*]}"
cmake --preset asan "${common[@]}" >/dev/null
cmake --build build/asan -j "$jobs" --target "${asan_targets[@]}"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --preset asan -R "$asan_tests" -j "$jobs"

echo "== ThreadSanitizer: test_concurrency"
cmake --preset tsan "${common[@]}" >/dev/null
cmake --build build/tsan -j "$jobs" --target test_concurrency
ctest --preset tsan -R '^concurrency$'
