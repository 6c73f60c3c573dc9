// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file identity.hpp
/// @brief The L-identity on a communicator: every stored slice I_m in the transform domain (each rank fills its own
/// slices), and I = L⁻¹(Î) distributed by tubes.
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

/// @brief The transform-domain m×m×p identity: local, no communication.
/// @throws shape_error (on every rank alike) when L cannot act on p tubes.
template <scalar T0, transform_policy L>
auto identity_transformed(const communicator& comm, std::size_t m, std::size_t p, const L& policy) {
  transformed<typename L::template original_scalar<T0>, L> id(comm, m, m, p, policy, uninitialized);
  identity_slices(tprod::detail::system_of<host_space>(), id.local().dynamic_view());
  return id;
}

/// @brief Collective: the m×m×p L-identity in the original domain, distributed by tubes.
template <scalar T0, transform_policy L>
auto identity(const communicator& comm, std::size_t m, std::size_t p, const L& policy) {
  return inverse_transform(identity_transformed<T0>(comm, m, p, policy));
}

}  // namespace tprod::distributed
