# Sourced by scripts/demo.sh and scripts/test.sh: installs what is missing and configures the build directory.
# Settings (environment): TPROD_BUILD_DIR (default build), TPROD_BUILD_TYPE (default Release),
# TPROD_JOBS (parallel compile and test jobs, default 2), CI (when true: print the tool versions first).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
build_dir=${TPROD_BUILD_DIR:-build}
build_type=${TPROD_BUILD_TYPE:-Release}
jobs=${TPROD_JOBS:-2}

# tprod_configure [cmake -D options...]: installs the missing Debian packages, then configures $build_dir.
tprod_configure() {
  "$repo_root/scripts/install-deps.sh"
  if [[ "${CI:-}" == true ]]; then
    cmake --version | head -n 1
    "${CXX:-c++}" --version | head -n 1
    echo "cores: $(nproc)"
  fi
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "$@"
}
