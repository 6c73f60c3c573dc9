#pragma once
/// @file memory_space.hpp
/// @brief Where a tensor's elements live; the backend follows from it.
///
/// Every algebra function is overloaded on the tensor's memory space: the CPU backend (Eigen, FFTW) takes
/// `host_space` tensors; the CUDA backend (reserved, enabled by TPROD_ENABLE_CUDA through tprod/cuda.hpp)
/// adds overloads for `device_space` tensors, so the same call works on either without a runtime switch.
#include <concepts>

namespace tprod {

struct host_space {};    ///< Ordinary host memory; computed with Eigen and FFTW.
struct device_space {};  ///< GPU memory; reserved for the CUDA backend.

template <class S>
concept memory_space = std::same_as<S, host_space> || std::same_as<S, device_space>;

}  // namespace tprod
