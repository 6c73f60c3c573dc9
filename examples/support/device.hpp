// SPDX-License-Identifier: Apache-2.0
#pragma once
// --device cpu|cuda for the examples that train on either memory space: the choice (default: cuda when this program
// was built with the CUDA backend and a GPU is present, else cpu), checked and printed at start, and a call of the
// example's training code with the chosen space. A program built without the CUDA backend refuses --device cuda
// with a sentence, and so does one that finds no GPU; neither falls back silently.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "support/example_options.hpp"
#include "tprod/core/memory_space.hpp"
#if TPROD_HAS_CUDA
#include "tprod/cuda.hpp"
#endif

namespace tprod::examples {

enum class device_kind { cpu, cuda };

/// The option's line for parse_options' `own` list.
inline std::pair<std::string, std::string> device_option() {
  return {"device", "D  cpu or cuda: where the models train (default: cuda when a GPU is present, else cpu)"};
}

/// @brief The device the options ask for, or the default; printed. @throws std::invalid_argument for another word,
/// for cuda in a program built without the CUDA backend, or without a GPU (saying why).
inline device_kind device_choice(const options& o) {
  const auto it = o.extra.find("device");
#if TPROD_HAS_CUDA
  const bool gpu = cuda::device_count() > 0;
#else
  const bool gpu = false;
#endif
  device_kind d = gpu ? device_kind::cuda : device_kind::cpu;
  if (it != o.extra.end()) {
    if (it->second == "cpu")
      d = device_kind::cpu;
    else if (it->second == "cuda")
      d = device_kind::cuda;
    else
      throw std::invalid_argument("--device expects cpu or cuda, got '" + it->second + "'");
  }
  if (d == device_kind::cuda && !gpu) {
#if TPROD_HAS_CUDA
    throw std::invalid_argument("--device cuda: no GPU is available (" + cuda::no_device_reason() + ")");
#else
    throw std::invalid_argument(
        "--device cuda: this program was built without the CUDA backend (configure with "
        "-DTPROD_ENABLE_CUDA=ON where nvcc is installed)");
#endif
  }
  std::printf("%s: training on the %s%s\n", o.example.c_str(), d == device_kind::cuda ? "GPU" : "CPU",
              it == o.extra.end() ? " (the default; --device cpu|cuda chooses)" : "");
  return d;
}

/// @brief f(host_space{}) or f(device_space{}) for the chosen device; the device branch exists only in programs
/// built with the CUDA backend.
template <class F>
decltype(auto) with_device(device_kind d, F&& f) {
#if TPROD_HAS_CUDA
  if (d == device_kind::cuda) return f(device_space{});
#endif
  (void)d;
  return f(host_space{});
}

}  // namespace tprod::examples
