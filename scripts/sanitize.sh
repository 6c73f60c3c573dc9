#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer checks that CI runs: the library's test programs built and run under AddressSanitizer and
# UndefinedBehaviorSanitizer (LeakSanitizer on), and the concurrency tests under ThreadSanitizer; any report fails
# (the sanitizers abort the program, and CTest counts it as failed). The test programs, not the examples' runs:
# every public header is reached by one of them. The CUDA and MPI parts are left out (a sanitizer runtime does not
# see into the GPU, and Open MPI's own allocations are reported as leaks).
# Usage: scripts/sanitize.sh [--ci]. Settings (environment): TPROD_JOBS (default 2). Builds in build/asan and
# build/tsan (the CMake presets).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/install-deps.sh"

# Every test program of the library (one per area of include/tprod/, tests/<area>/) and the program's tests; with
# --ci, the subset CI runs within its 30 minutes: the core (the buffers, views and tensors), header-only, under ASan
# and UBSan, and the concurrency tests under TSan: about 1.5 minutes on 2 cores. The transforms (the tube kernels,
# the FFTs) left CI's subset when the suite grew (their instrumented build alone took 82 s of CPU, most of a minute
# of CI's wall time, at the end of a run at 29 of its 30 minutes); they run in the full run, with the rest.
# The rest take 1 to 10 minutes each instrumented at -O0 on 2 cores with the instrumented tprod::instances
# (521 s of CPU to compile them alone), and run in the full run.
# (The concurrency tests run under TSan in both; under ASan too in the full run.)
areas=(core)
instances=(-DTPROD_BUILD_INSTANCES=OFF)
if [[ "${1:-}" != --ci ]]; then
  areas+=(concurrency algebra io graph cli backend decomp nn)
  instances=(-DTPROD_BUILD_INSTANCES=ON -DTPROD_INSTANCES_OPTIMIZATION=-O0)
fi
asan_targets=()
for area in "${areas[@]}"; do asan_targets+=("test_$area"); done
asan_tests="^($(IFS='|'; echo "${areas[*]}"))\$"
# Build time is most of the cost: the instrumented instances at -O0 and line tables only (-g1, enough for a report's
# file:line) instead of the presets' -O2 -g, which took 3 minutes per instances file on 2 cores.
common=(-DTPROD_ENABLE_CUDA=OFF -DTPROD_ENABLE_MPI=OFF -DTPROD_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-g1)

cmake --preset asan "${common[@]}" "${instances[@]}" >/dev/null
# The concurrency tests alone need no compiled instances: header-only saves building them a second time.
cmake --preset tsan "${common[@]}" -DTPROD_BUILD_INSTANCES=OFF >/dev/null
# Both instrumented builds at once: each ends in a long translation unit of its own (test_transform, 99 s of CPU;
# test_concurrency, 77 s), which one after the other left a core idle for about a minute.
echo "== building ${asan_targets[*]} for ASan + UBSan, test_concurrency for TSan"
cmake --build build/asan -j "$jobs" --target "${asan_targets[@]}" &
asan_build=$!
cmake --build build/tsan -j "$jobs" --target test_concurrency
wait "$asan_build"

export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
echo "== AddressSanitizer + UndefinedBehaviorSanitizer: ${asan_targets[*]}"
ctest --preset asan -R "$asan_tests" -j "$jobs"
echo "== ThreadSanitizer: test_concurrency"
ctest --preset tsan -R '^concurrency$'
