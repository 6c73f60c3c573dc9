#pragma once
/// @file inverse.hpp
/// @brief The L-inverse A⁻¹ = L⁻¹(slice-wise inverses of Â) (pinned; paper 000 Def. 7): A *_L A⁻¹ = I.
#include <Eigen/LU>
#include <sstream>

#include <vector>

#include "tprod/algebra/detail/slice_factorization.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief Transform-domain inverse: every stored slice inverted by LU with partial pivoting.
/// @throws shape_error if the slices are not square; numerical_error naming the first singular or numerically
/// singular slice with its estimate. A slice counts as singular when LU meets an exactly zero pivot (Eigen's
/// estimator is meaningless then: it returns 1 for diag(1, 0)), or when its reciprocal condition estimate,
/// measured against the largest slice's 1-norm (so a slice that is zero up to rounding is caught), is below m·ε.
/// NaN or Inf in Â is a numerical_error too.
template <scalar T, transform_policy L, extents3_type E>
transformed<T, L, E> inverse(const transformed<T, L, E>& ahat) {
  static_assert(extents_compatible(E::static_extent(0), E::static_extent(1)),
                "tprod::inverse: the tensor's fixed frontal slices must be square");
  TPROD_EXPECTS(ahat.m() == ahat.n(), "inverse: frontal slices must be square, but the tensor is " + ahat.shape());
  using D = typename L::template domain_scalar<T>;
  using matrix = Eigen::Matrix<D, Eigen::Dynamic, Eigen::Dynamic>;
  if (!ahat.data().elements().allFinite())
    throw numerical_error("inverse: the " + ahat.shape() + " tensor holds NaN or Inf (in the " +
                          std::string(L::name()) + " transform domain)");
  transformed<T, L, E> out(ahat.extents(), ahat.transform(), uninitialized);
  if (ahat.m() == 0)
    throw numerical_error("inverse: the " + ahat.shape() + " tensor has empty slices, which have no inverse");
  const auto one_norm = [&](std::size_t k) { return ahat.slice(k).cwiseAbs().colwise().sum().maxCoeff(); };
  real_t<T> scale = 0;
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k) scale = std::max(scale, one_norm(k));
  // Slices are inverted in parallel; the checks run afterwards in slice order, so the error names the first
  // singular slice whatever the threads did.
  std::vector<real_t<T>> rconds(ahat.stored_slices());
  detail::for_each_stored_slice(ahat, [&](std::size_t k) {
    const Eigen::PartialPivLU<matrix> lu(ahat.slice(k));
    const bool zero_pivot = ahat.m() > 0 && !(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > real_t<T>(0));
    rconds[k] = scale > 0 && !zero_pivot ? lu.rcond() * one_norm(k) / scale : real_t<T>(0);
    if (rconds[k] > real_t<T>(ahat.m()) * epsilon_v<T>) out.slice(k) = lu.inverse();
  });
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k) {
    const real_t<T> rcond = rconds[k];
    if (!(rcond > real_t<T>(ahat.m()) * epsilon_v<T>)) {
      std::ostringstream msg;
      msg << "inverse: transform-domain slice " << k << " of the " << ahat.shape() << " tensor (" << L::name()
          << ") is singular: reciprocal condition estimate " << rcond;
      throw numerical_error(msg.str());
    }
  }
  return out;
}

/// @brief The L-inverse of a square-sliced original-domain tensor.
/// Peak memory beyond A: Â and the inverted slices, which the inverse transform then reuses where it runs in
/// place (see in_place_execution), plus one LU per slice and thread.
/// @throws as inverse(transformed).
template <host_tensor3 A, transform_policy L>
auto inverse(const A& a, const L& policy) {
  return inverse_transform(inverse(transform(a, policy)));
}

}  // namespace tprod
