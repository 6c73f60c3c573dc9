// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file system.hpp
/// @brief The CUDA backend's system and the device execution: the stream every task is enqueued on and the
/// precision mode of float GEMMs. Selected for device_space tensors (core/memory_space.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/error.hpp"
#include "tprod/core/detail/thread_default.hpp"
#include "tprod/core/memory_space.hpp"

namespace tprod::cuda {

/// @brief How device work runs, Thrust's `par.on(stream)` style: `tprod::cuda::execution{stream}`.
/// - `stream`: the CUDA stream every kernel and library call of the operation is enqueued on, and on which its
///   results and temporaries are allocated (nullptr: the legacy default stream, which orders everything). Results
///   are ready when the stream reaches them; functions that return a host value (norms, inner products, the
///   inverse's singularity check) wait for it. A device tensor is freed on the stream it was allocated on, so it
///   must not outlive that stream.
/// - `tf32`: float GEMMs may use TF32 tensor cores (10-bit mantissa inputs, float accumulation): faster, with
///   relative errors near 1e-3 instead of 1e-6. Off by default; double and complex<double> are unaffected.
struct execution {
  cudaStream_t stream = nullptr;
  bool tf32 = false;
  friend bool operator==(const execution&, const execution&) = default;
};

/// @brief The calling thread's default device execution (what device calls without an execution argument use).
inline const execution& default_execution() { return tprod::detail::thread_default<execution>(); }

/// @brief Makes a device execution the calling thread's default until the scope ends (scopes nest).
using execution_scope = tprod::detail::thread_default_scope<execution>;

/// @brief The number of CUDA devices this process can use (0 without a GPU or a usable driver; no_device_reason()
/// says which).
inline int device_count() { return backend::cuda::raw::device_count(); }

/// @brief Why device_count() is 0: cudaGetDeviceCount's error (no device, a driver too old for this CUDA, no
/// driver at all); empty when a device is present.
inline std::string no_device_reason() { return backend::cuda::raw::no_device_reason(); }

/// @brief Throws cuda_error with a sentence saying so unless a CUDA device is present.
inline void require_device() {
  if (device_count() == 0)
    throw cuda_error("tprod::cuda: no CUDA device is available: " + no_device_reason() +
                     "; keep the tensors on the host, or run on a machine with an NVIDIA GPU and a driver for "
                     "this CUDA version");
}

/// @brief Waits until every operation enqueued on e's stream has finished.
inline void synchronize(const execution& e = default_execution()) { backend::cuda::raw::synchronize(e.stream); }

}  // namespace tprod::cuda

namespace tprod::backend::cuda {

/// @brief The first argument of every CUDA kernel task.
struct system {
  tprod::cuda::execution ex{};
  cudaStream_t stream() const { return ex.stream; }
};

}  // namespace tprod::backend::cuda

namespace tprod::backend {
template <>
struct system_for<device_space> {
  using type = cuda::system;
  using execution = tprod::cuda::execution;
  using execution_scope = tprod::cuda::execution_scope;
  static type make(const execution& ex) { return type{ex}; }
  static const execution& default_execution() { return tprod::cuda::default_execution(); }
};
}  // namespace tprod::backend
