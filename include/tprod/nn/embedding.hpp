// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file embedding.hpp
/// @brief Token embedding (a lookup table, then Ten_p) and the learnable class token of paper 001 (§5.3).
///
/// embedding: X(r, :) = E(:, token_r)ᵀ for the B·T tokens of a batch, folded into (B·T)×d_s×p (padding the
/// feature dimension when p ∤ d). The table E ∈ ℝ^{d×V} holds one column per token, so a lookup reads
/// contiguous memory; its gradient scatters the rows of d𝒳 back into the columns of the looked-up tokens.
/// class token: [𝒯_cls; 𝒳]_(1), prepending 𝒯_cls ∈ ℝ^{1×d_s×p} to every sequence of a batch.
#include <cstdint>
#include <span>
#include <vector>

#include "tprod/backend/kernels/embedding.hpp"
#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/core/random.hpp"
#include "tprod/nn/tensorize.hpp"

namespace tprod::nn {

/// @brief The token table in memory space S (`copy(params, space)` moves it).
template <std::floating_point T, memory_space S = host_space>
struct embedding_params {
  using memory_space_type = S;
  tensor3<T, dextents3, S> table;  ///< d×V×1: column v is token v's vector
  std::size_t dim() const { return table.m(); }
  std::size_t vocabulary() const { return table.n(); }
  template <class F>
  void for_each(F&& f) {
    f("table", table);
  }
};

/// @brief A d×V table with entries uniform in [−scale, scale].
template <std::floating_point T>
embedding_params<T> make_embedding_params(std::size_t vocabulary, std::size_t d, std::uint64_t seed, T scale = T(1)) {
  TPROD_EXPECTS(vocabulary > 0 && d > 0, "nn::make_embedding_params: vocabulary " + std::to_string(vocabulary) +
                                             " and width " + std::to_string(d) + " must be positive");
  embedding_params<T> e{random_tensor3<T>(d, vocabulary, 1, seed)};
  e.table *= scale;
  return e;
}

template <std::floating_point T, class S>
embedding_params<T, S> zeros_like(const embedding_params<T, S>& e) {
  return {tensor3<T, dextents3, S>(e.dim(), e.vocabulary(), 1)};
}

/// @brief The table copied to memory space To.
template <memory_space To, std::floating_point T, class S>
embedding_params<T, To> copy(const embedding_params<T, S>& e, To to) {
  return {copy(e.table, to)};
}

namespace detail {
template <class T, class S>
void check_tokens(const embedding_params<T, S>& e, const std::vector<std::size_t>& tokens, const char* who) {
  for (std::size_t r = 0; r < tokens.size(); ++r)
    TPROD_EXPECTS(tokens[r] < e.vocabulary(), std::string(who) + ": token " + std::to_string(tokens[r]) +
                                                  " at position " + std::to_string(r) +
                                                  " is outside the vocabulary of " + std::to_string(e.vocabulary()));
}
}  // namespace detail

/// @brief 𝒳 = Ten_p(E[tokens]) ∈ ℝ^{N×⌈d/p⌉×p} for N tokens (B·T of a batch, row b·T + t).
/// @throws shape_error for a token outside the vocabulary or p = 0.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> embedding_forward(const embedding_params<T, S>& e, const std::vector<std::size_t>& tokens,
                                           std::size_t p) {
  detail::check_tokens(e, tokens, "nn::embedding_forward");
  tensor3<T, dextents3, S> out(tokens.size(), slice_width(e.dim(), p), p, uninitialized);
  embedding_gather(tprod::detail::system_of<S>(), e.table.dynamic_view(), std::span<const std::size_t>(tokens),
                   out.dynamic_view());
  return out;
}

/// @brief dE += the scatter of d𝒳: column v of g.table receives the sum of the rows of Mat_p(d𝒳) whose token
/// is v (accumulating, so a stateful layer adds into its gradient without a table-sized temporary).
template <std::floating_point T, memory_space S>
void embedding_backward_add(const embedding_params<T, S>& e, const std::vector<std::size_t>& tokens,
                            const tensor3<T, dextents3, S>& d_out, embedding_params<T, S>& g) {
  const std::size_t d = e.dim(), n = tokens.size();
  TPROD_EXPECTS(d_out.m() == n && d_out.n() * d_out.p() >= d && slice_width(d, d_out.p()) == d_out.n(),
                "nn::embedding_backward: gradient " + d_out.shape() + " does not match " + std::to_string(n) +
                    " tokens of width " + std::to_string(d));
  TPROD_EXPECTS(g.table.m() == d && g.table.n() == e.vocabulary(),
                "nn::embedding_backward: gradient table " + g.table.shape() + " does not match " + e.table.shape());
  detail::check_tokens(e, tokens, "nn::embedding_backward");
  embedding_scatter_add(tprod::detail::system_of<S>(), std::span<const std::size_t>(tokens), d_out.dynamic_view(),
                        g.table.dynamic_view());
}

/// @brief dE: column v receives the sum of the rows of Mat_p(d𝒳) whose token is v.
template <std::floating_point T, memory_space S>
embedding_params<T, S> embedding_backward(const embedding_params<T, S>& e, const std::vector<std::size_t>& tokens,
                                          const tensor3<T, dextents3, S>& d_out) {
  embedding_params<T, S> g = zeros_like(e);
  embedding_backward_add(e, tokens, d_out, g);
  return g;
}

/// @brief The learnable class token 𝒯_cls ∈ ℝ^{1×d_s×p}, in memory space S.
template <std::floating_point T, memory_space S = host_space>
struct class_token_params {
  using memory_space_type = S;
  tensor3<T, dextents3, S> token;
  template <class F>
  void for_each(F&& f) {
    f("class_token", token);
  }
};

template <std::floating_point T, class S>
class_token_params<T, S> zeros_like(const class_token_params<T, S>& c) {
  return {tensor3<T, dextents3, S>(1, c.token.n(), c.token.p())};
}

template <memory_space To, std::floating_point T, class S>
class_token_params<T, To> copy(const class_token_params<T, S>& c, To to) {
  return {copy(c.token, to)};
}

template <std::floating_point T>
class_token_params<T> make_class_token(std::size_t ds, std::size_t p, std::uint64_t seed, T scale = T(0.02)) {
  class_token_params<T> c{random_tensor3<T>(1, ds, p, seed)};
  c.token *= scale;
  return c;
}

/// @brief [𝒯_cls; 𝒳_b]_(1) for every sequence b: (B·T)×d_s×p → (B·(T+1))×d_s×p, the class token first.
/// @throws shape_error when the rows are not whole sequences or the widths differ.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> prepend_class_token(const class_token_params<T, S>& c, const tensor3<T, dextents3, S>& x,
                                             std::size_t batch) {
  TPROD_EXPECTS(batch > 0 && x.m() % batch == 0 && x.n() == c.token.n() && x.p() == c.token.p(),
                "nn::prepend_class_token: input " + x.shape() + " with token " + c.token.shape() + " and batch " +
                    std::to_string(batch));
  const std::size_t len = x.m() / batch;
  tensor3<T, dextents3, S> out(x.m() + batch, x.n(), x.p(), uninitialized);
  const auto sys = tprod::detail::system_of<S>();
  copy_sequence_rows(sys, c.token.dynamic_view(), {0, 0, 1}, out.dynamic_view(), {len + 1, 0, 1}, batch, false);
  copy_sequence_rows(sys, x.dynamic_view(), {len, 0, len}, out.dynamic_view(), {len + 1, 1, len}, batch, false);
  return out;
}

/// @brief Backward of prepend_class_token: d𝒳 (the rows after each class token) and d𝒯_cls (their sum).
template <std::floating_point T, memory_space S>
std::pair<tensor3<T, dextents3, S>, class_token_params<T, S>> prepend_class_token_backward(
    const tensor3<T, dextents3, S>& d_out, std::size_t batch) {
  TPROD_EXPECTS(batch > 0 && d_out.m() % batch == 0 && d_out.m() / batch >= 2,
                "nn::prepend_class_token_backward: gradient " + d_out.shape() +
                    " is not B*(T+1) rows for B = " + std::to_string(batch));
  const std::size_t len1 = d_out.m() / batch, len = len1 - 1;
  std::pair<tensor3<T, dextents3, S>, class_token_params<T, S>> r{
      tensor3<T, dextents3, S>(len * batch, d_out.n(), d_out.p(), uninitialized),
      {tensor3<T, dextents3, S>(1, d_out.n(), d_out.p(), uninitialized)}};
  const auto sys = tprod::detail::system_of<S>();
  copy_sequence_rows(sys, d_out.dynamic_view(), {len1, 1, len}, r.first.dynamic_view(), {len, 0, len}, batch, false);
  sum_sequence_rows(sys, d_out.dynamic_view(), {len1, 0, 1}, batch, r.second.token.dynamic_view());
  return r;
}

}  // namespace tprod::nn
