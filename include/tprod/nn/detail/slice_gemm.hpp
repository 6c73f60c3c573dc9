#pragma once
/// @file slice_gemm.hpp
/// @brief The transform-domain linear map of every layer: Ŷ_k = X̂_k·Ŵ_k + 1·b̂_k for each slice k, as one
/// GEMM per slice over all B·T rows at once, and its backward pass.
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/mac_counter.hpp"

namespace tprod::nn::detail {

/// @brief Calls f(k, j, n) for every slice k < p and column panel [j, j + n) of a `cols`-wide destination, on the
/// default execution's threads: slices first, panels (backend::cpu::gemm_panels) when there are fewer slices
/// than threads. `macs` is the multiply-adds of one slice's GEMM (all p of them are tallied for mac_counter).
template <class F>
void for_each_slice_panel(std::size_t p, std::size_t cols, std::size_t macs, F&& f) {
  tally_macs(std::uint64_t(macs) * p);
  std::size_t threads = default_execution().thread_count();
  if (macs * p < backend::cpu::parallel_min_macs) threads = 1;
  const std::size_t panels = p >= threads ? 1 : std::max<std::size_t>(1, std::min((threads + p - 1) / p, cols / 16));
  const std::size_t width = (cols + panels - 1) / panels;
  backend::cpu::parallel_for(p * panels, threads, [&](std::size_t u) {
    const std::size_t k = u / panels, j = (u % panels) * width;
    if (j < cols) f(k, Eigen::Index(j), Eigen::Index(std::min(width, cols - j)));
  });
}

/// @brief Y_k = X_k · W_k[:, c0 : c0+q] (+ b_k[c0 : c0+q] on every row) for every slice k.
/// `b` is either 1×(≥c0+q)×p or empty (no bias).
template <class T>
void slice_linear_forward(const tensor3<T>& x, const tensor3<T>& w, const tensor3<T>& b, std::size_t c0, std::size_t q,
                          tensor3<T>& y) {
  const std::size_t p = x.p();
  ensure_shape(y, x.m(), q, p);
  // Slices × column panels of Y on the threads (column panels let one large slice, p = 1, use them all).
  for_each_slice_panel(p, q, x.m() * x.n() * q, [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
    auto yk = y.slice(k).middleCols(j, n);
    const auto wk = w.slice(k).middleCols(Eigen::Index(c0) + j, n);
    if (b.size() != 0) {
      // Eigen's `=` product zero-fills Y before accumulating; filling it with the bias instead saves both that
      // pass and a separate bias pass.
      yk.rowwise() = b.slice(k).row(0).segment(Eigen::Index(c0) + j, n);
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
  const std::size_t macs = x.m() * x.n() * dy.n();
  // dW and db by column panels of dY, then dX by column panels of its own (the rows of W).
  for_each_slice_panel(p, dy.n(), macs, [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
    const auto dyk = dy.slice(k).middleCols(j, n);
    dw.slice(k).middleCols(c + j, n).noalias() = x.slice(k).transpose() * dyk;
    if (db.size() != 0) db.slice(k).row(0).segment(c + j, n) = dyk.colwise().sum();
  });
  if (dx == nullptr) return;
  for_each_slice_panel(p, x.n(), macs, [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
    const auto wk = w.slice(k).middleCols(c, q).middleRows(j, n);
    if (accumulate)
      dx->slice(k).middleCols(j, n).noalias() += dy.slice(k) * wk.transpose();
    else
      dx->slice(k).middleCols(j, n).noalias() = dy.slice(k) * wk.transpose();
  });
}

}  // namespace tprod::nn::detail
