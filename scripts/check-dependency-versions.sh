#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds tprod's test programs against other versions of Eigen, xtensor and xtl, given as source trees, and runs
# them: the check that tprod accepts, say, Eigen 5 and xtensor 0.26 where the machine has Eigen 3.4 and xtensor
# 0.24. Nothing is committed or installed outside the scratch folder.
#   scripts/check-dependency-versions.sh EIGEN_SOURCE XTENSOR_SOURCE XTL_SOURCE [SCRATCH]
# SCRATCH (default build/dependency-versions) receives the three installs and tprod's build. Settings
# (environment): TPROD_JOBS (default 2). The other dependencies (doctest, nlohmann-json, zlib, Google Benchmark)
# come from the machine, as scripts/install-deps.sh installs them.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 EIGEN_SOURCE XTENSOR_SOURCE XTL_SOURCE [SCRATCH]" >&2
  exit 2
fi
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
eigen_src=$(cd "$1" && pwd)
xtensor_src=$(cd "$2" && pwd)
xtl_src=$(cd "$3" && pwd)
scratch=${4:-$repo_root/build/dependency-versions}
jobs=${TPROD_JOBS:-2}
prefix=$scratch/prefix
mkdir -p "$scratch"

install_source() {  # install_source NAME SOURCE [cmake options...]
  local name=$1 source=$2
  shift 2
  echo "== installing $name from $source"
  cmake -S "$source" -B "$scratch/build-$name" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release "$@" >"$scratch/build-$name.log"
  cmake --install "$scratch/build-$name" >>"$scratch/build-$name.log"
}
install_source eigen "$eigen_src" -DBUILD_TESTING=OFF -DEIGEN_BUILD_DOC=OFF -DEIGEN_BUILD_TESTING=OFF \
  -DEIGEN_BUILD_BLAS=OFF -DEIGEN_BUILD_LAPACK=OFF -DEIGEN_BUILD_PKGCONFIG=OFF
install_source xtl "$xtl_src" -DBUILD_TESTS=OFF
install_source xtensor "$xtensor_src" -DBUILD_TESTS=OFF

echo "== configuring tprod against them"
cmake -S "$repo_root" -B "$scratch/tprod" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON -DTPROD_BUILD_TESTS=ON -DTPROD_BUILD_BENCHMARKS=OFF \
  -DTPROD_BUILD_EXAMPLES=OFF -DTPROD_BUILD_TOOLS=OFF -DTPROD_ENABLE_CUDA=OFF -DTPROD_ENABLE_MPI=OFF \
  -DTPROD_UNITY_BUILD=ON -DTPROD_INSTANCES_OPTIMIZATION=-O1 | tee "$scratch/tprod-configure.log" |
  grep -E "Eigen|xtensor|tprod:" || true
grep -q "Eigen3_DIR.*$prefix" "$scratch/tprod/CMakeCache.txt" ||
  { echo "tprod did not find the Eigen in $prefix" >&2; exit 1; }
grep -q "xtensor_DIR.*$prefix" "$scratch/tprod/CMakeCache.txt" ||
  { echo "tprod did not find the xtensor in $prefix" >&2; exit 1; }

# The library's own test programs (one per area), not the program, the examples or the docs' programs.
targets=()
for dir in "$repo_root"/tests/*/; do
  area=$(basename "$dir")
  if compgen -G "$dir*.cpp" >/dev/null && [[ ! -f "$dir/CMakeLists.txt" ]]; then targets+=("test_$area"); fi
done
echo "== building ${targets[*]}"
cmake --build "$scratch/tprod" -j "$jobs" --target "${targets[@]}"
echo "== running them"
regex="^($(printf '%s|' "${targets[@]#test_}" | sed 's/|$//'))\$"
OMP_WAIT_POLICY=passive ctest --test-dir "$scratch/tprod" --output-on-failure -j "$jobs" -R "$regex" --no-tests=error
