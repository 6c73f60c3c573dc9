#pragma once
/// @file pooling.hpp
/// @brief Sequence pooling for classification heads: mean pooling over the valid tokens of every sequence,
/// and class-token pooling (the first token of every sequence, paper 001's [CLS]).
///
/// Input (B·T)×d_s×p (row b·T + t), output B×d_s×p. Mean pooling over variable-length sequences averages
/// the first lengths[b] tokens of sequence b (all T when no lengths are given) and sends zero gradient to the
/// padding.
#include <vector>

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
template <std::floating_point T>
tensor3<T> mean_pool_forward(const tensor3<T>& x, std::size_t batch, const std::vector<std::size_t>& lengths = {}) {
  const std::size_t len = detail::pool_length(x.m(), batch, lengths, "nn::mean_pool_forward");
  tensor3<T> out(batch, x.n(), x.p());
  for (std::size_t k = 0; k < x.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t n = lengths.empty() ? len : lengths[b];
      out.slice(k).row(Eigen::Index(b)) =
          x.slice(k).middleRows(Eigen::Index(b * len), Eigen::Index(n)).colwise().sum() / T(n);
    }
  return out;
}

/// @brief d𝒳(b·T + t, :, k) = d_out(b, :, k)/n_b for t < n_b, 0 on the padding.
template <std::floating_point T>
tensor3<T> mean_pool_backward(const tensor3<T>& d_out, std::size_t length,
                              const std::vector<std::size_t>& lengths = {}) {
  const std::size_t batch = d_out.m();
  detail::pool_length(batch * length, batch, lengths, "nn::mean_pool_backward");
  tensor3<T> dx(batch * length, d_out.n(), d_out.p());
  for (std::size_t k = 0; k < d_out.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t n = lengths.empty() ? length : lengths[b];
      dx.slice(k).middleRows(Eigen::Index(b * length), Eigen::Index(n)).rowwise() =
          d_out.slice(k).row(Eigen::Index(b)) / T(n);
    }
  return dx;
}

/// @brief out(b, :, k) = 𝒳(b·T, :, k): the first (class) token of every sequence.
template <std::floating_point T>
tensor3<T> class_token_pool_forward(const tensor3<T>& x, std::size_t batch) {
  const std::size_t len = detail::pool_length(x.m(), batch, {}, "nn::class_token_pool_forward");
  tensor3<T> out(batch, x.n(), x.p());
  for (std::size_t k = 0; k < x.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) out.slice(k).row(Eigen::Index(b)) = x.slice(k).row(Eigen::Index(b * len));
  return out;
}

/// @brief The gradient d_out placed on the first token of every sequence of length `length`, zero elsewhere.
template <std::floating_point T>
tensor3<T> class_token_pool_backward(const tensor3<T>& d_out, std::size_t length) {
  TPROD_EXPECTS(length > 0, "nn::class_token_pool_backward: the sequence length must be positive");
  tensor3<T> dx(d_out.m() * length, d_out.n(), d_out.p());
  for (std::size_t k = 0; k < d_out.p(); ++k)
    for (std::size_t b = 0; b < d_out.m(); ++b)
      dx.slice(k).row(Eigen::Index(b * length)) = d_out.slice(k).row(Eigen::Index(b));
  return dx;
}

}  // namespace tprod::nn
