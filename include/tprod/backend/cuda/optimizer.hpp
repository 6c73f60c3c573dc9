// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file optimizer.hpp
/// @brief The CUDA backend's multi-tensor optimizer tasks (contract: backend/kernels/optimizer.hpp), the mirror of
/// backend/cpu/optimizer.hpp: the tensors' pointers go to the device as one table and one kernel updates (or sums)
/// them all (src/cuda/optimizer.cu); a weight's sensitivity is one Thrust reduction.
#include <span>
#include <vector>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/optimizer.hpp"

namespace tprod::backend::cuda {

using kernels::adamw_coefficients;
using kernels::adamw_slot;

template <class T>
void adamw_update(const system& sys, std::span<const adamw_slot<T, device_space>> slots,
                  const adamw_coefficients<T>& c) {
  std::vector<raw::adamw_pointers<T>> table;
  table.reserve(slots.size());
  for (const auto& s : slots) table.push_back({s.param.data(), s.grad.data(), s.m.data(), s.v.data(), s.param.size()});
  raw::adamw_update(table.data(), table.size(), c, sys.stream());
}

template <class T>
double squared_norm_total(const system& sys, std::span<const dview<const T>> tensors) {
  std::vector<const T*> pointers;
  std::vector<std::size_t> sizes;
  for (const auto& x : tensors) {
    pointers.push_back(x.data());
    sizes.push_back(x.size());
  }
  return raw::squared_norm_total(pointers.data(), sizes.data(), pointers.size(), sys.stream());
}

/// @brief Σ_ij |w_ij·g_ij| in double (thrust::inner_product on the system's stream).
template <class T>
double weight_sensitivity(const system& sys, dview<const T> w, dview<const T> g) {
  return raw::weight_sensitivity(w.data(), g.data(), w.size(), sys.stream());
}

}  // namespace tprod::backend::cuda
