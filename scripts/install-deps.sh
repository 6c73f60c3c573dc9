#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages tprod needs that are not installed yet: the compiler and CMake, Eigen, FFTW,
# xtensor, doctest, Google Benchmark, clang (for the libFuzzer fuzz target), and for the data and checkpoint
# readers and the examples: nlohmann-json, zlib, ICU (the tokenizers), Fashion-MNIST, gnuplot, node and npm (the text corpus
# script); Doxygen for the API reference; Open MPI (libopenmpi-dev, openmpi-bin) for the distributed tensors;
# pybind11, NumPy, pytest and PyTorch for the Python package (python/), DLPack's header for its CUDA arrays.
# Quick and silent when everything is there; otherwise one `apt-get update` and one non-interactive `apt-get install`
# (through sudo when not run as root).
set -euo pipefail

packages=(build-essential cmake libeigen3-dev libfftw3-dev xtensor-dev doctest-dev libbenchmark-dev clang
          nlohmann-json3-dev zlib1g-dev libicu-dev dataset-fashion-mnist gnuplot-nox nodejs npm doxygen libopenmpi-dev
          openmpi-bin libxsmm-dev
          python3-dev pybind11-dev python3-numpy python3-pytest python3-torch libdlpack-dev)
# Packages that count as present when their program is on the PATH: NodeSource's nodejs bundles npm and
# conflicts with Debian's npm package, so asking apt for npm there would remove node.
declare -A provided_by_command=([nodejs]=node [npm]=npm)

# One dpkg-query for all of them; a package it does not know is simply absent from its output.
declare -A installed=()
while read -r name status; do
  if [[ "$status" == installed ]]; then installed[$name]=1; fi
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for package in "${packages[@]}"; do
  [[ -n "${installed[$package]:-}" ]] && continue
  command=${provided_by_command[$package]:-}
  [[ -n "$command" ]] && command -v "$command" >/dev/null 2>&1 && continue
  missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing ${missing[*]}, and apt-get is not available: install them by hand" >&2
  exit 1
fi

sudo=()
if ((EUID != 0)); then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing ${missing[*]}; run this script as root or install sudo" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
