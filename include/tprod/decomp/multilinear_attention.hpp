// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file multilinear_attention.hpp
/// @brief Multi-linear attention (Tensorized Transformer, Ma et al. 2019; paper 003): the block-term tensor
///        T = (1/P) Σ_p G_p ×_1 Q ×_2 K ×_3 V with factor matrices Q, K, V shared by all P terms, SplitConcat,
///        and the output projection.
///
/// Conventions: Q ∈ ℝ^{N_q×R_1}, K ∈ ℝ^{N_k×R_2}, V ∈ ℝ^{N_v×R_3} (rows are tokens, as the projected inputs of
/// attention), cores G_p ∈ ℝ^{R_1×R_2×R_3} (in the paper a trainable superdiagonal core, see diagonal_core), so
/// T ∈ ℝ^{N_q×N_k×N_v}. Because the factors are shared, T = ((1/P)·Σ_p G_p) ×_1 Q ×_2 K ×_3 V: one Tucker
/// reconstruction with the mean core, whatever P is. SplitConcat(T) splits T into its N_v frontal slices
/// (N_q×N_k each) and concatenates them side by side, which is exactly the mode-0 unfolding T_(0) ∈ ℝ^{N_q×N_kN_v}.
#include <string>
#include <vector>

#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/unfold.hpp"

namespace tprod {

/// @brief The R×R×R core with g on its superdiagonal (G(r, r, r) = g_r) and zeros elsewhere.
/// @throws shape_error when g is empty.
template <class Derived, real_scalar T = typename Derived::Scalar>
ndtensor<T> diagonal_core(const Eigen::MatrixBase<Derived>& g) {
  TPROD_EXPECTS(g.size() > 0 && (g.rows() == 1 || g.cols() == 1),
                "diagonal_core: expected a nonempty vector, got a " + shape_string(g) + " matrix");
  const auto r = std::size_t(g.size());
  ndtensor<T> c = zeros<T>({r, r, r});
  for (std::size_t k = 0; k < r; ++k) c.data()[k * (1 + r + r * r)] = g(Eigen::Index(k));
  return c;
}

/// @brief T = (1/P) Σ_p G_p ×_1 Q ×_2 K ×_3 V, computed as the mean core times the shared factors.
/// @throws shape_error when there are no cores, the cores differ in shape or are not of order 3, or a factor's
///         column count does not match the cores.
template <real_scalar T>
ndtensor<T> multilinear_attention_tensor(const std::vector<ndtensor<T>>& cores,
                                         const std::type_identity_t<dense_matrix<T>>& q,
                                         const std::type_identity_t<dense_matrix<T>>& k,
                                         const std::type_identity_t<dense_matrix<T>>& v) {
  TPROD_EXPECTS(!cores.empty(), "multilinear_attention_tensor: at least one core is needed");
  const nd_shape s = shape_of(cores[0]);
  TPROD_EXPECTS(s.size() == 3, "multilinear_attention_tensor: cores must be of order 3, got shape " + shape_string(s));
  for (std::size_t p = 1; p < cores.size(); ++p)
    TPROD_EXPECTS(shape_of(cores[p]) == s, "multilinear_attention_tensor: core " + std::to_string(p) + " has shape " +
                                               shape_string(shape_of(cores[p])) + " but core 0 has " +
                                               shape_string(s));
  TPROD_EXPECTS(std::size_t(q.cols()) == s[0] && std::size_t(k.cols()) == s[1] && std::size_t(v.cols()) == s[2],
                "multilinear_attention_tensor: Q " + shape_string(q) + ", K " + shape_string(k) + ", V " +
                    shape_string(v) + " do not fit cores of shape " + shape_string(s));
  ndtensor<T> mean = cores[0];
  for (std::size_t p = 1; p < cores.size(); ++p) detail::elements(mean) += detail::elements(cores[p]);
  detail::elements(mean) /= T(cores.size());
  return multi_mode_product(mean, std::vector<dense_matrix<T>>{q, k, v}, {0, 1, 2});
}

/// @brief SplitConcat(T) for T ∈ ℝ^{N_q×N_k×N_v}: [T(:, :, 0), T(:, :, 1), …, T(:, :, N_v − 1)] ∈ ℝ^{N_q×N_kN_v},
///        which equals the mode-0 unfolding T_(0).
/// @throws shape_error when T is not of order 3.
template <real_scalar T>
dense_matrix<T> split_concat(const ndtensor<T>& t) {
  TPROD_EXPECTS(t.dimension() == 3, "split_concat: expected a third-order tensor, got shape " +
                                        shape_string(shape_of(t)));
  return unfold(t, 0);
}

/// @brief MultiLinear(G; Q, K, V) = SplitConcat((1/P) Σ_p G_p ×_1 Q ×_2 K ×_3 V)·W_O, with W_O ∈ ℝ^{N_kN_v×d_out}.
/// @throws shape_error as multilinear_attention_tensor, or when W_O has not N_k·N_v rows.
template <real_scalar T>
dense_matrix<T> multilinear_attention(const std::vector<ndtensor<T>>& cores, const std::type_identity_t<dense_matrix<T>>& q,
                                      const std::type_identity_t<dense_matrix<T>>& k,
                                      const std::type_identity_t<dense_matrix<T>>& v,
                                      const std::type_identity_t<dense_matrix<T>>& w_o) {
  const dense_matrix<T> concat = split_concat(multilinear_attention_tensor(cores, q, k, v));
  TPROD_EXPECTS(w_o.rows() == concat.cols(), "multilinear_attention: W_O is " + shape_string(w_o) +
                                                 " but SplitConcat(T) is " + shape_string(concat));
  return concat * w_o;
}

}  // namespace tprod
