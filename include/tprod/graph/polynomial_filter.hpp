// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file polynomial_filter.hpp
/// @brief Polynomial graph filters f_α(Ψ) ×₁ x = Σ_{k<K} α_k Ψᵏ ×₁ x by Horner's rule, and their gradients.
///
/// Horner: z_{K−1} = α_{K−1} x, z_k = Ψ z_{k+1} + α_k x, y = z_0 — K − 1 products with Ψ, no power of Ψ formed.
/// For a symmetric Ψ = ΦΛΦᵀ this is the spectral convolution Φ f_α(Λ) Φᵀ x with smooth multipliers (a K−1-hop
/// filter); Ψ need not be symmetric here. The backward pass runs the recursion in reverse: with G_0 = ∂J/∂y and
/// G_{k+1} = Ψᵀ G_k, ∂J/∂α_k = ⟨G_k, x⟩, ∂J/∂x = Σ_k α_k G_k and ∂J/∂Ψ = Σ_{k<K−1} G_k z_{k+1}ᵀ.
///
/// The same filter and gradients take Ψ and the signal as matrix_in<T, S> (L×L×1 and L×R×1 tensor3s in memory
/// space S: on the device, cuBLAS), each step a backend task: Ψz a facewise GEMM, + α_k x an axpy, ⟨G_k, x⟩ a dot,
/// Ψᵀ and z_{k+1}ᵀ one transpose each.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "tprod/decomp/ndtensor_in.hpp"
#include "tprod/graph/adjacency.hpp"
#include "tprod/graph/mode1.hpp"

namespace tprod {

/// @brief The Horner iterates z_1, …, z_{K−1} a backward pass needs (z_k = Σ_{m≥k} α_m Ψ^{m−k} x).
template <real_scalar T>
struct polynomial_filter_saved {
  std::vector<dense_matrix<T>> z;  ///< z[k − 1] = z_k, L×R each
};

/// @brief ∂J/∂Ψ, ∂J/∂α, ∂J/∂x of one polynomial filter.
template <real_scalar T>
struct polynomial_filter_grads {
  dense_matrix<T> d_psi;    ///< L×L
  dense_vector<T> d_alpha;  ///< K
  dense_matrix<T> d_x;      ///< L×R
};

namespace detail {
template <class T>
void check_polynomial_filter(const dense_matrix<T>& psi, std::size_t k, Eigen::Index rows, const char* where) {
  expect_square(psi, where, "graph matrix");
  TPROD_EXPECTS(k >= 1, std::string(where) + ": a polynomial filter needs at least one coefficient (K >= 1)");
  TPROD_EXPECTS(rows == psi.rows(), std::string(where) + ": a signal on " + std::to_string(rows) +
                                        " vertices for a " + shape_string(psi) + " graph matrix");
}
}  // namespace detail

/// @brief Y = f_α(Ψ) X = Σ_{k<K} α_k Ψᵏ X for X ∈ ℝ^{L×R}, by Horner, into y (L×R, e.g. rows of a larger
///        matrix); the iterates go to `saved`, whose buffers are reused from call to call (no allocation once sized).
/// @throws shape_error when Ψ is not L×L, α is empty, or y is not L×R.
template <real_scalar T>
void polynomial_filter_matrix(const dense_matrix<T>& psi, std::type_identity_t<std::span<const T>> alpha,
                              const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                              std::type_identity_t<Eigen::Ref<dense_matrix<T>>> y, polynomial_filter_saved<T>& saved) {
  const std::size_t k = alpha.size();
  detail::check_polynomial_filter(psi, k, x.rows(), "polynomial_filter");
  TPROD_EXPECTS(y.rows() == x.rows() && y.cols() == x.cols(), "polynomial_filter: output " + shape_string(y) +
                                                                  " for a " + shape_string(x) + " signal");
  saved.z.resize(k - 1);
  if (k == 1) {
    y = alpha[0] * x;
    return;
  }
  saved.z[k - 2] = alpha[k - 1] * x;  // z_{K−1}
  for (std::size_t m = k - 1; m-- > 0;) {  // z_m = Ψ z_{m+1} + α_m x, z_{m+1} in saved.z[m]
    auto step = [&](auto&& z_m) {
      z_m = alpha[m] * x;
      z_m.noalias() += psi * saved.z[m];
    };
    if (m == 0)
      step(y);
    else
      step(saved.z[m - 1]);
  }
}

/// @brief Y = f_α(Ψ) X as above, returned; the iterates go to `saved` when given.
/// @throws shape_error when Ψ is not L×L or α is empty.
template <real_scalar T>
dense_matrix<T> polynomial_filter_matrix(const dense_matrix<T>& psi, std::type_identity_t<std::span<const T>> alpha,
                                         const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                         polynomial_filter_saved<T>* saved = nullptr) {
  polynomial_filter_saved<T> local;
  dense_matrix<T> y(x.rows(), x.cols());
  polynomial_filter_matrix<T>(psi, alpha, x, y, saved ? *saved : local);
  return y;
}

/// @brief f_α(Ψ) ×₁ x for a vector, matrix or tensor signal (Horner, any K ≥ 1).
/// @throws shape_error when Ψ is not L×L for the signal's first mode L, or α is empty.
template <real_scalar T, class Signal>
Signal polynomial_filter(const dense_matrix<T>& psi, std::type_identity_t<std::span<const T>> alpha, const Signal& x) {
  return apply_mode1(x, [&](const auto& x1) { return polynomial_filter_matrix<T>(psi, alpha, x1); });
}

/// @brief Gradients of J through Y = f_α(Ψ) X, given G = ∂J/∂Y and the iterates saved by the forward pass, into
///        g (resized; its buffers and the two of `work`, for G_k and G_{k+1}, are reused from call to call).
/// @throws shape_error when the shapes do not match the forward pass.
template <real_scalar T>
void polynomial_filter_backward(const dense_matrix<T>& psi, std::type_identity_t<std::span<const T>> alpha,
                                const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                const polynomial_filter_saved<T>& saved,
                                const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& dy,
                                polynomial_filter_grads<T>& g, std::array<dense_matrix<T>, 2>& work) {
  const std::size_t k = alpha.size();
  detail::check_polynomial_filter(psi, k, x.rows(), "polynomial_filter_backward");
  TPROD_EXPECTS(saved.z.size() == k - 1 && dy.rows() == x.rows() && dy.cols() == x.cols(),
                "polynomial_filter_backward: gradient " + shape_string(dy) + " and " +
                    std::to_string(saved.z.size()) + " saved iterates do not match a " + shape_string(x) +
                    " signal and K = " + std::to_string(k));
  g.d_alpha.resize(Eigen::Index(k));
  g.d_alpha(0) = (dy.array() * x.array()).sum();
  g.d_x = alpha[0] * dy;
  if (k == 1) {
    g.d_psi.setZero(psi.rows(), psi.cols());
    return;
  }
  g.d_psi.noalias() = dy * saved.z[0].transpose();
  work[0].noalias() = psi.transpose() * dy;  // G_1
  for (std::size_t m = 1; m < k; ++m) {      // G_m in work[(m − 1) % 2]
    const dense_matrix<T>& gm = work[(m - 1) % 2];
    g.d_alpha(Eigen::Index(m)) = (gm.array() * x.array()).sum();
    g.d_x += alpha[m] * gm;
    if (m + 1 == k) break;
    g.d_psi.noalias() += gm * saved.z[m].transpose();
    work[m % 2].noalias() = psi.transpose() * gm;
  }
}

/// @brief The same gradients, returned.
/// @throws shape_error when the shapes do not match the forward pass.
template <real_scalar T>
polynomial_filter_grads<T> polynomial_filter_backward(const dense_matrix<T>& psi,
                                                      std::type_identity_t<std::span<const T>> alpha,
                                                      const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                                      const polynomial_filter_saved<T>& saved,
                                                      const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& dy) {
  polynomial_filter_grads<T> g;
  std::array<dense_matrix<T>, 2> work;
  polynomial_filter_backward<T>(psi, alpha, x, saved, dy, g, work);
  return g;
}

/// @brief The Horner iterates of a filter in memory space S.
template <real_scalar T, memory_space S>
struct polynomial_filter_saved_in {
  std::vector<matrix_in<T, S>> z;  ///< z[k − 1] = z_k, L×R×1 each
};

/// @brief ∂J/∂Ψ, ∂J/∂α, ∂J/∂x of a filter in memory space S (∂J/∂α on the host).
template <real_scalar T, memory_space S>
struct polynomial_filter_grads_in {
  matrix_in<T, S> d_psi;  ///< L×L×1
  std::vector<T> d_alpha;  ///< K
  matrix_in<T, S> d_x;    ///< L×R×1
};

namespace detail {
template <class T, memory_space S>
void check_polynomial_filter_in(const matrix_in<T, S>& psi, std::size_t k, const matrix_in<T, S>& x,
                                const char* where) {
  TPROD_EXPECTS(psi.p() == 1 && psi.m() == psi.n() && x.p() == 1,
                std::string(where) + ": the graph matrix " + psi.shape() + " and the signal " + x.shape() +
                    " must be L x L x 1 and L x R x 1");
  TPROD_EXPECTS(k >= 1, std::string(where) + ": a polynomial filter needs at least one coefficient (K >= 1)");
  TPROD_EXPECTS(x.m() == psi.m(), std::string(where) + ": a signal on " + std::to_string(x.m()) +
                                      " vertices for a " + psi.shape() + " graph matrix");
}

/// c = a·b + β·c for matrices in S (one facewise GEMM; β = 0 or 1).
template <class T, memory_space S>
void multiply_into(const matrix_in<T, S>& a, const matrix_in<T, S>& b, matrix_in<T, S>& c, bool accumulate) {
  const auto sys = system_of<S>();
  if (!accumulate) {
    c = matrix_in<T, S>(a.m(), b.n(), 1, uninitialized);
    facewise(sys, cview(a), cview(b), c.view());
    return;
  }
  matrix_in<T, S> product(a.m(), b.n(), 1, uninitialized);
  facewise(sys, cview(a), cview(b), product.view());
  axpy(sys, T(1), cview(product), c.view());
}

template <class T, memory_space S>
matrix_in<T, S> transposed_in(const matrix_in<T, S>& a) {
  matrix_in<T, S> at(a.n(), a.m(), 1, uninitialized);
  adjoint_slices(system_of<S>(), cview(a), at.view());
  return at;
}
}  // namespace detail

/// @brief Y = f_α(Ψ) X for Ψ and X ∈ ℝ^{L×R} in memory space S, by Horner, where they live; the iterates go to
///        `saved` when given.
/// @throws shape_error when Ψ is not L×L×1, X not L×R×1, or α is empty.
template <real_scalar T, memory_space S>
matrix_in<T, S> polynomial_filter_matrix(const matrix_in<T, S>& psi, std::type_identity_t<std::span<const T>> alpha,
                                         const matrix_in<T, S>& x,
                                         polynomial_filter_saved_in<T, S>* saved = nullptr) {
  const std::size_t k = alpha.size();
  detail::check_polynomial_filter_in(psi, k, x, "polynomial_filter");
  const auto sys = detail::system_of<S>();
  polynomial_filter_saved_in<T, S> local;
  auto& z = (saved ? *saved : local).z;
  z.assign(k - 1, matrix_in<T, S>());
  matrix_in<T, S> current = x;  // z_{K−1} = α_{K−1} x
  scale(sys, alpha[k - 1], current.view());
  for (std::size_t m = k - 1; m-- > 0;) {  // z_m = Ψ z_{m+1} + α_m x
    matrix_in<T, S> next;
    detail::multiply_into(psi, current, next, false);
    axpy(sys, alpha[m], cview(x), next.view());
    z[m] = std::move(current);
    current = std::move(next);
  }
  return current;
}

/// @brief Gradients of J through Y = f_α(Ψ) X in memory space S, given G = ∂J/∂Y and the forward pass's iterates.
/// @throws shape_error when the shapes do not match the forward pass.
template <real_scalar T, memory_space S>
polynomial_filter_grads_in<T, S> polynomial_filter_backward(const matrix_in<T, S>& psi,
                                                            std::type_identity_t<std::span<const T>> alpha,
                                                            const matrix_in<T, S>& x,
                                                            const polynomial_filter_saved_in<T, S>& saved,
                                                            const matrix_in<T, S>& dy) {
  const std::size_t k = alpha.size();
  detail::check_polynomial_filter_in(psi, k, x, "polynomial_filter_backward");
  TPROD_EXPECTS(saved.z.size() == k - 1 && dy.extents() == x.extents(),
                "polynomial_filter_backward: gradient " + dy.shape() + " and " + std::to_string(saved.z.size()) +
                    " saved iterates do not match a " + x.shape() + " signal and K = " + std::to_string(k));
  const auto sys = detail::system_of<S>();
  polynomial_filter_grads_in<T, S> g{matrix_in<T, S>(psi.m(), psi.n(), 1), std::vector<T>(k), dy};
  scale(sys, alpha[0], g.d_x.view());
  const matrix_in<T, S> psi_t = detail::transposed_in(psi);
  matrix_in<T, S> gm = dy;  // G_m
  for (std::size_t m = 0; m < k; ++m) {
    g.d_alpha[m] = dot(sys, cview(gm), cview(x));
    if (m > 0) axpy(sys, alpha[m], cview(gm), g.d_x.view());
    if (m + 1 == k) break;
    detail::multiply_into(gm, detail::transposed_in(saved.z[m]), g.d_psi, true);  // += G_m z_{m+1}ᵀ
    matrix_in<T, S> next;
    detail::multiply_into(psi_t, gm, next, false);  // G_{m+1} = Ψᵀ G_m
    gm = std::move(next);
  }
  return g;
}

}  // namespace tprod
