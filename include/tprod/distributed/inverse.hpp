// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file inverse.hpp
/// @brief The L-inverse of distributed tensors: every owned slice inverted by LU on its rank, with the singularity
/// test of the one-process inverse (reciprocal condition against the largest slice's 1-norm over all ranks).
#include <sstream>
#include <vector>

#include "tprod/algebra/inverse.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

/// @brief Collective: Â⁻¹, slice by slice on the owning ranks.
/// @throws shape_error (on every rank alike) unless the slices are square; distributed_error on every rank naming the
/// rank and the first singular global slice it owns (as tprod::inverse words it), or NaN/Inf.
template <scalar T, transform_policy L>
transformed<T, L> inverse(const transformed<T, L>& ahat) {
  TPROD_EXPECTS(ahat.m() == ahat.n(), "distributed::inverse: frontal slices must be square, but the tensor is " +
                                          ahat.shape());
  TPROD_EXPECTS(ahat.m() > 0, "distributed::inverse: the " + ahat.shape() +
                                  " tensor has empty slices, which have no inverse");
  using D = typename L::template domain_scalar<T>;
  using R = real_t<D>;
  const auto& comm = ahat.comm();
  const auto sys = tprod::detail::system_of<host_space>();
  const auto& a = ahat.local();
  const std::size_t owned = ahat.slices().size(comm.rank());
  // The one-process test measures every slice against the largest slice's 1-norm: that maximum is global.
  R local_scale = 0, scale = 0;
  for (std::size_t k = 0; k < owned; ++k)
    local_scale = std::max(local_scale, a.slice(k).cwiseAbs().colwise().sum().maxCoeff());
  TPROD_MPI_CHECK(MPI_Allreduce(&local_scale, &scale, 1, mpi_type<R>(), MPI_MAX, comm.get()));
  transformed<T, L> out(comm, ahat.m(), ahat.n(), ahat.p(), ahat.transform(), uninitialized);
  collectively(comm, [&] {
    if (!all_finite(sys, a.dynamic_view()))
      throw numerical_error("distributed::inverse: the " + ahat.shape() + " tensor holds NaN or Inf (in the " +
                            std::string(L::name()) + " transform domain)");
    const R min_rcond = R(ahat.m()) * epsilon_v<D>;
    const std::vector<R> rconds = invert_slices(sys, a.dynamic_view(), out.local().dynamic_view(), min_rcond);
    for (std::size_t k = 0; k < rconds.size(); ++k) {
      const R rcond = scale > 0 ? rconds[k] * local_scale / scale : R(0);  // against the global largest 1-norm
      if (!(rcond > min_rcond)) {
        std::ostringstream msg;
        msg << "distributed::inverse: transform-domain slice " << ahat.first_slice() + k << " of the "
            << ahat.shape() << " tensor (" << L::name() << ") is singular: reciprocal condition estimate " << rcond;
        throw numerical_error(msg.str());
      }
    }
  });
  return out;
}

/// @brief Collective: the L-inverse A⁻¹ of a square-sliced tensor, distributed by tubes.
template <scalar T, transform_policy L>
auto inverse(const tensor3<T>& a, const L& policy) {
  return inverse_transform(inverse(transform(a, policy)));
}

}  // namespace tprod::distributed
