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

}  // namespace tprod
