#pragma once
/// @file identity.hpp
/// @brief The L-identity I = L⁻¹(stack of I_m) (pinned; paper 000 Def. 5): A *_L I = I *_L A = A.
///
/// Under the DFT this is the familiar "first slice I, others 0"; under the DCT it is not (its tubes are
/// Φᵀ·1), which is why tprod defines it in the transform domain rather than by that pattern.
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief The transform-domain identity: every stored slice is I_m.
template <scalar T, transform_policy L>
auto identity_transformed(std::size_t m, std::size_t p, const L& policy) {
  using Tp = typename L::template original_scalar<T>;
  transformed<Tp, L> id(dextents3(m, m, p), policy);
  for (std::size_t k = 0; k < id.stored_slices(); ++k) id.slice(k).setIdentity();
  return id;
}

/// @brief The m×m×p L-identity in the original domain, L⁻¹(stack of I_m).
/// @throws shape_error if L cannot act on p tubes.
template <scalar T, transform_policy L>
auto identity(std::size_t m, std::size_t p, const L& policy) {
  return inverse_transform(identity_transformed<T>(m, p, policy));
}

}  // namespace tprod
