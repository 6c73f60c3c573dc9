// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode1.hpp
/// @brief Graph signals and the mode-1 product: every graph operation acts on the first mode of its signal.
///
/// A signal on the L vertices of a graph is a vector x ∈ ℝ^L, a matrix X ∈ ℝ^{L×F} (F signals side by side), an
/// order-N tensor 𝒳 ∈ ℝ^{L×I_2×⋯×I_N} (`ndtensor`) or a `tensor3` of shape L×n×p. With tprod's column-major storage
/// all four are the L×R matrix X_(1) (R = the product of the other modes) without a copy, so M ×₁ 𝒳 is the single
/// GEMM M·X_(1), and the result keeps the kind and the trailing shape of the input.
///
/// A signal in a memory space — a `tensor3<T, dextents3, S>` (on the host too) or an `ndtensor_in<T, S>` — stays
/// there: the graph operator M (L′×L, small next to the signal, formed on the host from the graph) is applied by the
/// backend's multiply_mode task where the signal lives (Eigen on the host, cuBLAS on the device). Every graph
/// function of a signal (the Fourier transforms, spectral convolution, the RGTN passes) takes such signals.
#include <string>
#include <type_traits>

#include "tprod/algebra/mode_product.hpp"
#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/ndtensor_in.hpp"

namespace tprod {

/// @brief f applied to the mode-1 unfolding: f receives X_(1) as an L×R `Eigen::Map` and returns an L'×R matrix,
///        which is given back as a signal of the same kind as x with its first mode resized to L'.
template <real_scalar T, class F>
dense_vector<T> apply_mode1(const dense_vector<T>& x, F&& f) {
  const dense_matrix<T> y = f(Eigen::Map<const dense_matrix<T>>(x.data(), x.size(), 1));
  return Eigen::Map<const dense_vector<T>>(y.data(), y.rows());
}
template <real_scalar T, class F>
dense_matrix<T> apply_mode1(const dense_matrix<T>& x, F&& f) {
  return f(Eigen::Map<const dense_matrix<T>>(x.data(), x.rows(), x.cols()));
}
template <real_scalar T, class F>
ndtensor<T> apply_mode1(const ndtensor<T>& x, F&& f) {
  TPROD_EXPECTS(x.dimension() >= 1, "apply_mode1: a graph signal needs at least one mode");
  nd_shape s = shape_of(x);
  const std::size_t rest = s[0] == 0 ? 0 : x.size() / s[0];
  const dense_matrix<T> y = f(Eigen::Map<const dense_matrix<T>>(x.data(), Eigen::Index(s[0]), Eigen::Index(rest)));
  s[0] = std::size_t(y.rows());
  return from_column_major<T>(s, y.data(), std::size_t(y.size()));
}
template <real_scalar T, class F>
tensor3<T> apply_mode1(const tensor3<T>& x, F&& f) {
  const dense_matrix<T> y =
      f(Eigen::Map<const dense_matrix<T>>(x.data(), Eigen::Index(x.m()), Eigen::Index(x.n() * x.p())));
  tensor3<T> r(std::size_t(y.rows()), x.n(), x.p());
  std::copy(y.data(), y.data() + y.size(), r.data());
  return r;
}

namespace detail {
/// Signals that live in a memory space and are computed on there through backend tasks.
template <class Signal> struct is_signal_in_space : std::false_type {};
template <class T, memory_space S> struct is_signal_in_space<tensor3<T, dextents3, S>> : std::true_type {};
template <class T, memory_space S> struct is_signal_in_space<ndtensor_in<T, S>> : std::true_type {};
template <class Signal> constexpr bool signal_in_space = is_signal_in_space<Signal>::value;

/// L, the vertices of a signal (its first mode), and R, the product of the other modes.
template <class T, memory_space S>
std::pair<std::size_t, std::size_t> mode1_extents(const tensor3<T, dextents3, S>& x) {
  return {x.m(), x.n() * x.p()};
}
template <class T, memory_space S>
std::pair<std::size_t, std::size_t> mode1_extents(const ndtensor_in<T, S>& x) {
  TPROD_EXPECTS(!x.shape().empty(), "mode1_product: a graph signal needs at least one mode");
  const std::size_t l = x.shape()[0];
  return {l, l == 0 ? 0 : x.size() / l};
}

/// M ×₁ X for a signal in its memory space, one multiply_mode there; `where` names the caller in the error.
template <class T, memory_space S>
tensor3<T, dextents3, S> mode1_product_in(const dense_matrix<T>& m, const tensor3<T, dextents3, S>& x,
                                          const char* where) {
  TPROD_EXPECTS(std::size_t(m.cols()) == x.m(), std::string(where) + ": a " + shape_string(m) +
                                                    " matrix cannot multiply a signal on " + std::to_string(x.m()) +
                                                    " vertices (" + x.shape() + ")");
  return mode_product(x, m, 0);
}
template <class T, memory_space S>
ndtensor_in<T, S> mode1_product_in(const dense_matrix<T>& m, const ndtensor_in<T, S>& x, const char* where) {
  const auto [l, rest] = mode1_extents(x);
  TPROD_EXPECTS(std::size_t(m.cols()) == l, std::string(where) + ": a " + shape_string(m) +
                                                " matrix cannot multiply a signal on " + std::to_string(l) +
                                                " vertices (" + shape_string(x.shape()) + ")");
  nd_shape shape = x.shape();
  shape[0] = std::size_t(m.rows());
  const tensor3_view<const T, dextents3, S> x1(x.elements().data(), l, rest, 1);
  return ndtensor_in<T, S>(std::move(shape), mode_product(x1, m, 0));
}
}  // namespace detail

/// @brief M ×₁ 𝒳: the first mode of the signal multiplied by M ∈ ℝ^{L'×L}, y_{l', …} = Σ_l m_{l', l} x_{l, …};
///        a signal in a memory space stays there (the file comment).
/// @throws shape_error when M does not have L columns.
template <real_scalar T, class Signal>
Signal mode1_product(const dense_matrix<T>& m, const Signal& x) {
  if constexpr (detail::signal_in_space<Signal>) {
    return detail::mode1_product_in(m, x, "mode1_product");
  } else {
    return apply_mode1(x, [&](const auto& x1) -> dense_matrix<T> {
      TPROD_EXPECTS(m.cols() == x1.rows(), "mode1_product: a " + shape_string(m) +
                                               " matrix cannot multiply a signal on " + std::to_string(x1.rows()) +
                                               " vertices (mode-1 unfolding " + shape_string(x1) + ")");
      return m * x1;
    });
  }
}

}  // namespace tprod
