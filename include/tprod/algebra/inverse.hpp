// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file inverse.hpp
/// @brief The L-inverse A⁻¹ = L⁻¹(slice-wise inverses of Â) (pinned; paper 000 Def. 7): A *_L A⁻¹ = I.
#include <sstream>
#include <vector>

#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief Transform-domain inverse: every stored slice inverted by LU with partial pivoting, in Â's memory space.
/// @throws shape_error if the slices are not square; numerical_error naming the first singular or numerically
/// singular slice with its estimate. A slice counts as singular when LU meets an exactly zero pivot, or when its
/// reciprocal condition number, measured against the largest slice's 1-norm (so a slice that is zero up to
/// rounding is caught), is below m·ε (the CPU estimates it, Eigen's rcond; the GPU computes it exactly from the
/// inverse, 1/(‖Â_k‖₁‖Â_k⁻¹‖₁)). NaN or Inf in Â is a numerical_error too.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
transformed<T, L, E, S> inverse(const transformed<T, L, E, S>& ahat) {
  static_assert(extents_compatible(E::static_extent(0), E::static_extent(1)),
                "tprod::inverse: the tensor's fixed frontal slices must be square");
  TPROD_EXPECTS(ahat.m() == ahat.n(), "inverse: frontal slices must be square, but the tensor is " + ahat.shape());
  const auto sys = detail::system_of<S>();
  const slice_window& w = ahat.window();
  transformed<T, L, E, S> out(ahat.extents(), ahat.transform(), w, uninitialized);
  if (ahat.m() == 0)
    throw numerical_error("inverse: the " + ahat.shape() + " tensor has empty slices, which have no inverse");
  // The backend measures each slice against the largest of its slices; spread over holders the test is against
  // the largest of every holder's, so the estimates are rescaled by (this holder's largest) / (the overall).
  real_t<T> rescale = 1;
  if (w.group) {
    if constexpr (std::same_as<S, host_space>) {
      real_t<T> local = 0;
      for (std::size_t k = 0; k < w.count; ++k)
        local = std::max(local, ahat.slice(k).cwiseAbs().colwise().sum().maxCoeff());
      const double overall = w.max(double(local));
      rescale = overall > 0 ? real_t<T>(double(local) / overall) : real_t<T>(0);
    } else {
      throw argument_error("inverse: a tensor spread over several holders is inverted in host memory only");
    }
  }
  w.agree([&] {
    if (!all_finite(sys, ahat.data().dynamic_view()))
      throw numerical_error("inverse: the " + ahat.shape() + " tensor holds NaN or Inf (in the " +
                            std::string(L::name()) + " transform domain)");
    // The checks run after every slice is inverted, in slice order, so the error names the first singular slice
    // whatever the threads did.
    const real_t<T> min_rcond = real_t<T>(ahat.m()) * epsilon_v<T>;
    const std::vector<real_t<T>> rconds =
        invert_slices(sys, ahat.data().dynamic_view(), out.data().dynamic_view(), min_rcond);
    for (std::size_t k = 0; k < rconds.size(); ++k) {
      const real_t<T> rcond = rconds[k] * rescale;
      if (!(rcond > min_rcond)) {
        std::ostringstream msg;
        msg << "inverse: transform-domain slice " << w.first + k << " of the " << ahat.shape() << " tensor ("
            << L::name() << ") is singular: reciprocal condition estimate " << rcond;
        throw numerical_error(msg.str());
      }
    }
  });
  return out;
}

/// @brief The L-inverse of a square-sliced original-domain tensor, in A's memory space.
/// Peak memory beyond A: Â and the inverted slices, which the inverse transform then reuses where it runs in
/// place, plus one LU per slice and thread.
/// @throws as inverse(transformed).
template <any_tensor3 A, transform_policy L>
auto inverse(const A& a, const L& policy) {
  return inverse_transform(inverse(transform(a, policy)));
}

}  // namespace tprod
