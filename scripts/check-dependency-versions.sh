#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds tprod's test programs against other versions of Eigen, xtensor and xtl, given as source trees, and runs
# them: the check that tprod accepts, say, Eigen 5 and xtensor 0.26 where the machine has Eigen 3.4 and xtensor
# 0.24. Nothing is committed or installed outside the scratch folder.
#   scripts/check-dependency-versions.sh EIGEN_SOURCE XTENSOR_SOURCE XTL_SOURCE [SCRATCH]
# SCRATCH (default build/dependency-versions) receives the three installs and tprod's build. Settings
# (environment): TPROD_JOBS (default 2); TPROD_CHECK_AREAS, the test areas to build and run (default every one,
# e.g. "core algebra transform decomp" for the ones that reach Eigen's SVDs and xtensor). The other dependencies (doctest, nlohmann-json, zlib, Google Benchmark)
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
  # xtensor 0.26 and xtl 0.8 ask for CMake 3.29, newer than Debian 12's 3.25, for nothing their install uses: a
  # scratch copy with the minimum lowered to this CMake's version installs the same headers and package files.
  local have
  have=$(cmake --version | head -n 1 | sed 's/[^0-9.]//g')
  if ! grep -qE "cmake_minimum_required\(VERSION 3\.(2[0-5]|1[0-9]|[0-9])[.)]" "$source/CMakeLists.txt"; then
    rm -rf "$scratch/src-$name"
    cp -r "$source" "$scratch/src-$name"
    sed -i -E "s/cmake_minimum_required\(VERSION [0-9.]+/cmake_minimum_required(VERSION ${have%.*}/" \
      "$scratch/src-$name/CMakeLists.txt"
    source=$scratch/src-$name
  fi
  # No entry in the user's package registry (~/.cmake/packages): Eigen's build exports one by default, and every
  # later find_package(Eigen3) on the machine would find this scratch tree.
  cmake -S "$source" -B "$scratch/build-$name" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON -DCMAKE_EXPORT_PACKAGE_REGISTRY=OFF "$@" \
    >"$scratch/build-$name.log"
  cmake --install "$scratch/build-$name" >>"$scratch/build-$name.log"
}
install_source eigen "$eigen_src" -DBUILD_TESTING=OFF -DEIGEN_BUILD_DOC=OFF -DEIGEN_BUILD_TESTING=OFF \
  -DEIGEN_BUILD_BLAS=OFF -DEIGEN_BUILD_LAPACK=OFF -DEIGEN_BUILD_PKGCONFIG=OFF
install_source xtl "$xtl_src" -DBUILD_TESTS=OFF
install_source xtensor "$xtensor_src" -DBUILD_TESTS=OFF

[[ ! -d "$HOME/.cmake/packages/Eigen3" ]] || echo "note: ~/.cmake/packages/Eigen3 exists (not made by this script)"
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
  if [[ -n "${TPROD_CHECK_AREAS:-}" && " $TPROD_CHECK_AREAS " != *" $area "* ]]; then continue; fi
  if compgen -G "$dir*.cpp" >/dev/null && [[ ! -f "$dir/CMakeLists.txt" ]]; then targets+=("test_$area"); fi
done
echo "== building ${targets[*]}"
cmake --build "$scratch/tprod" -j "$jobs" --target "${targets[@]}"
echo "== running them"
regex="^($(printf '%s|' "${targets[@]#test_}" | sed 's/|$//'))\$"
OMP_WAIT_POLICY=passive ctest --test-dir "$scratch/tprod" --output-on-failure -j "$jobs" -R "$regex" --no-tests=error
