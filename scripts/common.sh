# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/demo.sh and scripts/test.sh: installs what is missing and configures the build directory.
# Settings (environment): TPROD_BUILD_DIR (default build), TPROD_BUILD_TYPE (default Release),
# TPROD_JOBS (parallel compile and test jobs, default 2), CI (when true: print the tool versions first),
# TPROD_ENABLE_CUDA, TPROD_ENABLE_MPI and TPROD_BUILD_PYTHON (OFF leaves that part out).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
build_dir=${TPROD_BUILD_DIR:-build}
build_type=${TPROD_BUILD_TYPE:-Release}
jobs=${TPROD_JOBS:-2}

# The CUDA backend is built whenever nvcc is found (CUDACXX, the PATH, or /usr/local/cuda/bin/nvcc), GPU or not:
# the device code then compiles in every build, and its tests report "skipped" on a machine without a GPU.
# TPROD_ENABLE_CUDA=OFF in the environment builds the CPU part only.
cuda_options=()
nvcc=${CUDACXX:-$(command -v nvcc || true)}
if [[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=/usr/local/cuda/bin/nvcc
fi
if [[ "${TPROD_ENABLE_CUDA:-ON}" == OFF ]]; then
  echo "tprod: TPROD_ENABLE_CUDA=OFF: building the CPU part only"
elif [[ -n "$nvcc" ]]; then
  echo "tprod: CUDA backend on ($nvcc)"
  cuda_options=(-DTPROD_ENABLE_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc")
else
  echo "tprod: no nvcc found (CUDACXX, PATH, /usr/local/cuda/bin): building the CPU part only"
  cuda_options=(-DTPROD_ENABLE_CUDA=OFF)
fi

# The distributed tensors and their tests (mpirun with 1 to 4 ranks) are built whenever Open MPI is there, which
# install-deps.sh installs; TPROD_ENABLE_MPI=OFF in the environment leaves them out.
mpi_options=(-DTPROD_ENABLE_MPI=OFF)
if [[ "${TPROD_ENABLE_MPI:-ON}" != OFF ]]; then
  mpi_options=(-DTPROD_ENABLE_MPI=ON)
fi

# The Python package (python/) is built whenever TPROD_BUILD_PYTHON is not OFF, with Debian's Python 3, where
# install-deps.sh puts NumPy, pytest and PyTorch (a python3 earlier on the PATH, such as pyenv's, may lack them).
python=python3
if [[ -x /usr/bin/python3 ]]; then
  python=/usr/bin/python3
fi
python_options=(-DTPROD_BUILD_PYTHON=OFF)
if [[ "${TPROD_BUILD_PYTHON:-ON}" != OFF ]]; then
  python_options=(-DTPROD_BUILD_PYTHON=ON "-DPython3_EXECUTABLE=$(command -v "$python" || echo "$python")")
fi

# The release settings that timed runs (the example pages, the demo, the benchmarks) need. A build tree keeps its
# cache, so a tree that CI's settings configured once (-O1 instances and programs) would otherwise time those.
measured_build=(-DTPROD_INSTANCES_OPTIMIZATION=-O2 -DTPROD_PROGRAMS_OPTIMIZATION= -DTPROD_PYTHON_OPTIMIZATION=)

# tprod_configure [cmake -D options...]: installs the missing Debian packages, then configures $build_dir.
tprod_configure() {
  "$repo_root/scripts/install-deps.sh"
  if [[ "${CI:-}" == true ]]; then
    cmake --version | head -n 1
    "${CXX:-c++}" --version | head -n 1
    echo "cores: $(nproc)"
  fi
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "${cuda_options[@]}" "${mpi_options[@]}" \
    "${python_options[@]}" "$@"
}
