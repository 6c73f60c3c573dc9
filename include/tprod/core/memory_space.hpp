// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file memory_space.hpp
/// @brief Where a tensor's elements live, and how the backend that computes on them is found.
///
/// Every tensor type carries its memory space (`tensor3<T, E, Space>`, `tensor3_view<T, E, Space>`,
/// `transformed<T, L, E, Space>`). The algebra is written once over the space: it asks `backend::system_for<Space>`
/// for the space's *system* (a small value carrying that backend's execution settings) and calls the kernel tasks
/// unqualified with it, so overload resolution (argument-dependent lookup on the system's namespace) picks the
/// backend. This is Thrust's `select_system`: the CPU backend (Eigen, FFTW, OpenMP; backend/cpu/) specializes
/// system_for<host_space>, the CUDA backend (cuBLAS, cuFFT, cuSOLVER; backend/cuda/, through tprod/cuda.hpp and
/// the compiled tprod::cuda library) specializes system_for<device_space>. Nothing in core, transform or algebra
/// names a backend.
#include <concepts>
#include <string_view>

namespace tprod {

struct host_space {    ///< Ordinary host memory; computed with Eigen, FFTW and OpenMP.
  static constexpr std::string_view name() { return "host"; }
};
struct device_space {  ///< GPU memory; computed with CUDA (include tprod/cuda.hpp and link tprod::cuda).
  static constexpr std::string_view name() { return "device"; }
};

template <class S>
concept memory_space = std::same_as<S, host_space> || std::same_as<S, device_space>;

namespace backend {
/// @brief The backend of a memory space: `type` is its system (the first argument of every kernel task) and
/// `execution` the per-call execution settings users pass. Specialized by each backend; the primary template is
/// left undefined so that using device tensors without tprod/cuda.hpp fails at compile time.
template <memory_space S>
struct system_for;
}  // namespace backend

namespace detail {
/// @brief The execution type of a memory space's backend (tprod::execution on the host, tprod::cuda::execution
/// on the device), as a non-deduced parameter type: the operands decide the space, then the execution must fit.
template <memory_space S>
using execution_of = typename backend::system_for<S>::execution;
/// @brief Makes an execution of space S the calling thread's default for a scope: the results and temporaries
/// of an operation given an explicit execution are then allocated under it (on the device: on its stream).
template <memory_space S>
using execution_scope_of = typename backend::system_for<S>::execution_scope;
/// @brief The calling thread's default execution of space S.
template <memory_space S>
const execution_of<S>& default_execution_of() {
  return backend::system_for<S>::default_execution();
}
/// @brief The backend system for an execution of space S (by default, the calling thread's default execution).
template <memory_space S>
auto system_of(const execution_of<S>& ex = default_execution_of<S>()) {
  return backend::system_for<S>::make(ex);
}
}  // namespace detail

}  // namespace tprod
