// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief The mode-n product X ×_n U of an order-N tensor with a matrix, and chains of them.
#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/decomp/unfold.hpp"

namespace tprod {

namespace detail {

/// Below this many rows per block, the mode-n product goes through an explicit unfolding (one large GEMM)
/// instead of one GEMM per block; blocks this thin waste most of a GEMM kernel. Not tuned beyond that.
inline constexpr std::size_t mode_product_min_block_rows = 16;

}  // namespace detail

/// @brief The mode-n product Y = X ×_n U with U ∈ ℝ^{J×I_n}:
///        Y(i_1, …, j, …, i_N) = Σ_{i_n} U(j, i_n)·X(i_1, …, i_n, …, i_N), i.e. Y_(n) = U·X_(n).
/// Mode 0 is one GEMM on the data, the last mode one GEMM with Uᵀ, other modes one GEMM per block
/// X(…, :, b) (or one on the unfolding when those blocks are thin). U may be any Eigen expression
/// (e.g. `V.transpose()`); it is evaluated once.
/// @throws shape_error when U has not I_n columns or the mode is out of range.
template <real_scalar T>
ndtensor<T> mode_product(const ndtensor<T>& x, const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& u,
                         std::size_t mode) {
  nd_shape shape = shape_of(x);
  detail::expect_nonempty(shape, "mode_product");
  detail::expect_mode(mode, shape, "mode_product");
  const auto [before, size, after] = detail::split_at(shape, mode);
  TPROD_EXPECTS(std::size_t(u.cols()) == size,
                "mode_product: a " + shape_string(u) + " matrix cannot multiply mode " + std::to_string(mode) +
                    " (size " + std::to_string(size) + ") of a tensor of shape " + shape_string(shape));
  TPROD_EXPECTS(u.rows() > 0, "mode_product: the " + shape_string(u) + " matrix has no rows");
  const auto j = std::size_t(u.rows());
  shape[mode] = j;
  ndtensor<T> y = ndtensor<T>::from_shape(shape);
  using map = Eigen::Map<dense_matrix<T>>;
  using cmap = Eigen::Map<const dense_matrix<T>>;
  const auto idx = [](std::size_t v) { return Eigen::Index(v); };
  if (before == 1) {
    map(y.data(), idx(j), idx(after)).noalias() = u * cmap(x.data(), idx(size), idx(after));
  } else if (after == 1) {
    map(y.data(), idx(before), idx(j)).noalias() = cmap(x.data(), idx(before), idx(size)) * u.transpose();
  } else if (before >= detail::mode_product_min_block_rows) {
    for (std::size_t b = 0; b < after; ++b)
      map(y.data() + before * j * b, idx(before), idx(j)).noalias() =
          cmap(x.data() + before * size * b, idx(before), idx(size)) * u.transpose();
  } else {
    const dense_matrix<T> product = u * unfold(x, mode);
    y = fold(product, mode, shape);
  }
  return y;
}

/// @brief Whether a chain of mode products uses the factors as given or transposed.
enum class factor_use : bool { as_given, transposed };

namespace detail {

/// The order in which a chain of mode products runs (the products that shrink the tensor most first; the order does
/// not change the result), after checking the modes against the shape. sizes[k] = (rows, columns) of factor k.
/// @throws shape_error when the counts differ, a mode repeats or is out of range.
inline std::vector<std::size_t> mode_chain_order(const nd_shape& shape,
                                                 const std::vector<std::pair<std::size_t, std::size_t>>& sizes,
                                                 const std::vector<std::size_t>& modes, factor_use use,
                                                 const char* where) {
  TPROD_EXPECTS(sizes.size() == modes.size(), std::string(where) + ": " + std::to_string(sizes.size()) +
                                                  " factors for " + std::to_string(modes.size()) + " modes");
  for (std::size_t k = 0; k < modes.size(); ++k) {
    expect_mode(modes[k], shape, where);
    TPROD_EXPECTS(std::count(modes.begin(), modes.end(), modes[k]) == 1,
                  std::string(where) + ": mode " + std::to_string(modes[k]) + " is given twice");
  }
  const bool t = use == factor_use::transposed;
  const auto out_size = [&](std::size_t k) { return double(t ? sizes[k].second : sizes[k].first); };
  const auto in_size = [&](std::size_t k) { return double(t ? sizes[k].first : sizes[k].second); };
  std::vector<std::size_t> order(modes.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out_size(a) / in_size(a) < out_size(b) / in_size(b); });
  return order;
}

}  // namespace detail

/// @brief The chain Y = X ×_{m_1} U_1 ×_{m_2} U_2 ⋯ over distinct modes (the order does not change the result;
///        products that shrink the tensor most are done first). With factor_use::transposed, Y = X ×_{m_k} U_kᵀ,
///        the projection onto factor matrices U_k ∈ ℝ^{I_{m_k}×R_k}.
/// @throws shape_error when the counts differ, a mode repeats or is out of range, or a factor does not fit.
template <real_scalar T>
ndtensor<T> multi_mode_product(const ndtensor<T>& x, const std::vector<dense_matrix<T>>& factors,
                               const std::vector<std::size_t>& modes, factor_use use = factor_use::as_given) {
  std::vector<std::pair<std::size_t, std::size_t>> sizes;  // (rows, columns) of each factor
  for (const auto& f : factors) sizes.emplace_back(std::size_t(f.rows()), std::size_t(f.cols()));
  const auto order = detail::mode_chain_order(shape_of(x), sizes, modes, use, "multi_mode_product");
  if (modes.empty()) return x;
  ndtensor<T> y;
  const ndtensor<T>* current = &x;  // the input is read in place, never copied
  for (const std::size_t k : order) {
    ndtensor<T> next = use == factor_use::transposed ? mode_product(*current, factors[k].transpose(), modes[k])
                                                     : mode_product(*current, factors[k], modes[k]);
    y = std::move(next);
    current = &y;
  }
  return y;
}

}  // namespace tprod
