// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file error.hpp
/// @brief tprod::cuda_error: a CUDA, cuBLAS, cuFFT, cuSOLVER or cuRAND call failed. The message names the call,
/// its status and the file and line of tprod that made it.
#include <stdexcept>
#include <string>

namespace tprod {

struct cuda_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tprod
