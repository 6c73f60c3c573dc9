#pragma once
/// @file slice_gemm.hpp
/// @brief The transform-domain linear map of every layer: Ŷ_k = X̂_k·Ŵ_k + 1·b̂_k for each slice k, as one
/// GEMM per slice over all B·T rows at once, and its backward pass.
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn::detail {

/// @brief Y_k = X_k · W_k[:, c0 : c0+q] (+ b_k[c0 : c0+q] on every row) for every slice k.
/// `b` is either 1×(≥c0+q)×p or empty (no bias).
template <class T>
void slice_linear_forward(const tensor3<T>& x, const tensor3<T>& w, const tensor3<T>& b, std::size_t c0, std::size_t q,
                          tensor3<T>& y) {
  const std::size_t p = x.p();
  ensure_shape(y, x.m(), q, p);
  // Slices on the threads; a single slice (p = 1) is one large GEMM that Eigen threads itself.
  backend::cpu::parallel_for(p, default_execution().thread_count(), [&](std::size_t k) {
    auto yk = y.slice(k);
    const auto wk = w.slice(k).middleCols(Eigen::Index(c0), Eigen::Index(q));
    if (b.size() != 0) {
      // Eigen's `=` product zero-fills Y before accumulating; filling it with the bias instead saves both that
      // pass and a separate bias pass.
      yk.rowwise() = b.slice(k).row(0).segment(Eigen::Index(c0), Eigen::Index(q));
      yk.noalias() += x.slice(k) * wk;
    } else {
      yk.noalias() = x.slice(k) * wk;
    }
  });
}

/// @brief Backward of slice_linear_forward for the columns c0…c0+q of W (q = dY's width):
/// dW_k[:, cols] = X_kᵀ·dY_k, db_k[cols] = 1ᵀ·dY_k (when db is not empty), and, when dx is given,
/// dX_k = dY_k·W_k[:, cols]ᵀ (added to dX when `accumulate`).
template <class T>
void slice_linear_backward(const tensor3<T>& x, const tensor3<T>& w, const tensor3<T>& dy, std::size_t c0,
                           tensor3<T>* dx, bool accumulate, tensor3<T>& dw, tensor3<T>& db) {
  const std::size_t p = x.p();
  const auto q = Eigen::Index(dy.n()), c = Eigen::Index(c0);
  if (dx != nullptr && !accumulate) ensure_shape_like(*dx, x);
  backend::cpu::parallel_for(p, default_execution().thread_count(), [&](std::size_t k) {
    const auto dyk = dy.slice(k);
    dw.slice(k).middleCols(c, q).noalias() = x.slice(k).transpose() * dyk;
    if (db.size() != 0) db.slice(k).row(0).segment(c, q) = dyk.colwise().sum();
    if (dx == nullptr) return;
    if (accumulate)
      dx->slice(k).noalias() += dyk * w.slice(k).middleCols(c, q).transpose();
    else
      dx->slice(k).noalias() = dyk * w.slice(k).middleCols(c, q).transpose();
  });
}

}  // namespace tprod::nn::detail
