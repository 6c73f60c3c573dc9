// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file identity.hpp
/// @brief The L-identity I = L⁻¹(stack of I_m) (pinned; paper 000 Def. 5): A *_L I = I *_L A = A.
///
/// Under the DFT this is the familiar "first slice I, others 0"; under the DCT it is not (its tubes are
/// Φᵀ·1), which is why tprod defines it in the transform domain rather than by that pattern.
#include <optional>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief The transform-domain identity in memory space S (host by default): every stored slice is I_m (those
/// `window` names when given: a tensor spread over several holders).
template <scalar T, memory_space S = host_space, transform_policy L>
auto identity_transformed(std::size_t m, std::size_t p, const L& policy, std::optional<slice_window> window = {}) {
  using Tp = typename L::template original_scalar<T>;
  auto id = window ? transformed<Tp, L, dextents3, S>(dextents3(m, m, p), policy, *window, uninitialized)
                   : transformed<Tp, L, dextents3, S>(dextents3(m, m, p), policy, uninitialized);
  identity_slices(detail::system_of<S>(), id.data().dynamic_view());
  return id;
}

/// @brief The m×m×p L-identity in the original domain, L⁻¹(stack of I_m), in memory space S (host by default):
/// `identity<float>(m, p, dct{})`, `identity<float, tprod::device_space>(m, p, dct{})`.
/// @throws shape_error if L cannot act on p tubes.
template <scalar T, memory_space S = host_space, transform_policy L>
auto identity(std::size_t m, std::size_t p, const L& policy) {
  return inverse_transform(identity_transformed<T, S>(m, p, policy));
}

}  // namespace tprod
