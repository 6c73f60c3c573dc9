// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file unfold.hpp
/// @brief Mode-n unfolding (matricization) X_(n) and its inverse, folding (Kolda–Bader ordering).
#include <string>

#include "tprod/decomp/ndtensor.hpp"

namespace tprod {

namespace detail {

/// The three sizes of x seen around mode n: x's data is a (before × I_n × after) column-major array,
/// before = Π_{m<n} I_m, after = Π_{m>n} I_m. Every mode-wise kernel of this area works on this view.
struct mode_split {
  std::size_t before, size, after;
};

inline mode_split split_at(const nd_shape& shape, std::size_t mode) {
  return {product(shape, 0, mode), shape[mode], product(shape, mode + 1, shape.size())};
}

}  // namespace detail

/// @brief The mode-n unfolding X_(n) ∈ ℝ^{I_n × Π_{m≠n} I_m} (Kolda–Bader).
///
/// Element (i_1, …, i_N) goes to row i_n and column Σ_{m≠n} i_m·Π_{k<m, k≠n} I_k: the other modes
/// keep their order and earlier modes vary fastest. X_(0) is the data itself (a free reshape).
/// @pre mode < X.dimension().
/// @throws shape_error when the mode is out of range or a mode is empty.
template <real_scalar T>
dense_matrix<T> unfold(const ndtensor<T>& x, std::size_t mode) {
  const nd_shape shape = shape_of(x);
  detail::expect_nonempty(shape, "unfold");
  detail::expect_mode(mode, shape, "unfold");
  const auto [before, size, after] = detail::split_at(shape, mode);
  dense_matrix<T> y(Eigen::Index(size), Eigen::Index(before * after));
  // Block b of the data is the before×I_n matrix of x(…, :, b); its transpose fills columns before·b onwards.
  for (std::size_t b = 0; b < after; ++b)
    y.middleCols(Eigen::Index(before * b), Eigen::Index(before)) =
        Eigen::Map<const dense_matrix<T>>(x.data() + before * size * b, Eigen::Index(before), Eigen::Index(size))
            .transpose();
  return y;
}

/// @brief The tensor of the given shape whose mode-n unfolding is M: fold(unfold(X, n), n, shape(X)) = X.
/// @throws shape_error when M is not I_n × Π_{m≠n} I_m for that shape, or the mode is out of range.
template <class Derived, real_scalar T = typename Derived::Scalar>
ndtensor<T> fold(const Eigen::MatrixBase<Derived>& m, std::size_t mode, const nd_shape& shape) {
  detail::expect_nonempty(shape, "fold");
  detail::expect_mode(mode, shape, "fold");
  const auto [before, size, after] = detail::split_at(shape, mode);
  TPROD_EXPECTS(std::size_t(m.rows()) == size && std::size_t(m.cols()) == before * after,
                "fold: a " + shape_string(m) + " matrix is not the mode-" + std::to_string(mode) +
                    " unfolding of shape " + shape_string(shape) + " (expected " + std::to_string(size) +
                    "x" + std::to_string(before * after) + ")");
  ndtensor<T> x = ndtensor<T>::from_shape(shape);
  for (std::size_t b = 0; b < after; ++b)
    Eigen::Map<dense_matrix<T>>(x.data() + before * size * b, Eigen::Index(before), Eigen::Index(size)) =
        m.middleCols(Eigen::Index(before * b), Eigen::Index(before)).transpose();
  return x;
}

}  // namespace tprod
