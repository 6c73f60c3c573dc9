// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file pooling.hpp
/// @brief Sequence pooling for classification heads: mean pooling over the valid tokens of every sequence,
/// and class-token pooling (the first token of every sequence, paper 001's [CLS]).
///
/// Input (B·T)×d_s×p (row b·T + t), output B×d_s×p. Mean pooling over variable-length sequences averages
/// the first lengths[b] tokens of sequence b (all T when no lengths are given) and sends zero gradient to the
/// padding.
#include <span>
#include <vector>

#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

namespace detail {
inline std::size_t pool_length(std::size_t rows, std::size_t batch, const std::vector<std::size_t>& lengths,
                               const char* who) {
  TPROD_EXPECTS(batch > 0 && rows % batch == 0 && rows > 0, std::string(who) + ": " + std::to_string(rows) +
                                                                " rows are not whole sequences of a batch of " +
                                                                std::to_string(batch));
  const std::size_t len = rows / batch;
  TPROD_EXPECTS(lengths.empty() || lengths.size() == batch, std::string(who) + ": " + std::to_string(lengths.size()) +
                                                                " lengths for a batch of " + std::to_string(batch));
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TPROD_EXPECTS(lengths[b] >= 1 && lengths[b] <= len, std::string(who) + ": length " + std::to_string(lengths[b]) +
                                                            " of sequence " + std::to_string(b) + " is outside 1.." +
                                                            std::to_string(len));
  return len;
}
}  // namespace detail

/// @brief out(b, :, k) = (1/n_b) Σ_{t<n_b} 𝒳(b·T + t, :, k), n_b = lengths[b] (or T).
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> mean_pool_forward(const tensor3<T, dextents3, S>& x, std::size_t batch,
                                           const std::vector<std::size_t>& lengths = {}) {
  detail::pool_length(x.m(), batch, lengths, "nn::mean_pool_forward");
  tensor3<T, dextents3, S> out(batch, x.n(), x.p(), uninitialized);
  mean_pool(tprod::detail::system_of<S>(), x.dynamic_view(), std::span<const std::size_t>(lengths),
            out.dynamic_view());
  return out;
}

/// @brief d𝒳(b·T + t, :, k) = d_out(b, :, k)/n_b for t < n_b, 0 on the padding.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> mean_pool_backward(const tensor3<T, dextents3, S>& d_out, std::size_t length,
                                            const std::vector<std::size_t>& lengths = {}) {
  const std::size_t batch = d_out.m();
  detail::pool_length(batch * length, batch, lengths, "nn::mean_pool_backward");
  tensor3<T, dextents3, S> dx(batch * length, d_out.n(), d_out.p(), uninitialized);
  mean_pool_backward(tprod::detail::system_of<S>(), d_out.dynamic_view(), std::span<const std::size_t>(lengths),
                     dx.dynamic_view());
  return dx;
}

/// @brief out(b, :, k) = 𝒳(b·T, :, k): the first (class) token of every sequence.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> class_token_pool_forward(const tensor3<T, dextents3, S>& x, std::size_t batch) {
  const std::size_t len = detail::pool_length(x.m(), batch, {}, "nn::class_token_pool_forward");
  tensor3<T, dextents3, S> out(batch, x.n(), x.p(), uninitialized);
  copy_sequence_rows(tprod::detail::system_of<S>(), x.dynamic_view(), {len, 0, 1}, out.dynamic_view(), {1, 0, 1},
                     batch, false);
  return out;
}

/// @brief The gradient d_out placed on the first token of every sequence of length `length`, zero elsewhere.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> class_token_pool_backward(const tensor3<T, dextents3, S>& d_out, std::size_t length) {
  TPROD_EXPECTS(length > 0, "nn::class_token_pool_backward: the sequence length must be positive");
  tensor3<T, dextents3, S> dx(d_out.m() * length, d_out.n(), d_out.p());  // zero-filled
  copy_sequence_rows(tprod::detail::system_of<S>(), d_out.dynamic_view(), {1, 0, 1}, dx.dynamic_view(),
                     {length, 0, 1}, d_out.m(), false);
  return dx;
}

}  // namespace tprod::nn
