#pragma once
/// @file inverse.hpp
/// @brief The L-inverse A⁻¹ = L⁻¹(slice-wise inverses of Â) (pinned; paper 000 Def. 7): A *_L A⁻¹ = I.
#include <Eigen/LU>
#include <sstream>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief Transform-domain inverse: every stored slice inverted by LU with partial pivoting.
/// @throws shape_error if the slices are not square; numerical_error naming the first singular or numerically
/// singular slice (reciprocal condition estimate below m·ε) with its estimate.
template <scalar T, transform_policy L, extents3_type E>
transformed<T, L, E> inverse(const transformed<T, L, E>& ahat) {
  static_assert(extents_compatible(E::static_extent(0), E::static_extent(1)),
                "tprod::inverse: the tensor's fixed frontal slices must be square");
  TPROD_EXPECTS(ahat.m() == ahat.n(), "inverse: frontal slices must be square, but the tensor is " + ahat.shape());
  using D = typename L::template domain_scalar<T>;
  using matrix = Eigen::Matrix<D, Eigen::Dynamic, Eigen::Dynamic>;
  transformed<T, L, E> out(ahat.extents(), ahat.transform());
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k) {
    const Eigen::PartialPivLU<matrix> lu(ahat.slice(k));
    const auto rcond = lu.rcond();
    if (!(rcond > real_t<T>(ahat.m()) * epsilon_v<T>)) {
      std::ostringstream msg;
      msg << "inverse: transform-domain slice " << k << " of the " << ahat.shape() << " tensor (" << L::name()
          << ") is singular: reciprocal condition estimate " << rcond;
      throw numerical_error(msg.str());
    }
    out.slice(k) = lu.inverse();
  }
  return out;
}

/// @brief The L-inverse of a square-sliced original-domain tensor.
/// @throws as inverse(transformed).
template <host_tensor3 A, transform_policy L>
auto inverse(const A& a, const L& policy) {
  return inverse_transform(inverse(transform(a, policy)));
}

}  // namespace tprod
