// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mac_counter.hpp
/// @brief Counts the multiply-adds of the GEMM-shaped work of the L-layers (the slice linear maps of every
/// L-linear layer, projection and FFN, and the attention's score and weighting products), from the shapes of the
/// products they issue: what flop_count.hpp's models predict, measured.
///
/// Every kernel adds the multiply-adds of its products when it issues them (one relaxed atomic addition per call,
/// not per element), so a counter sees the work of every thread. Not counted: the tube transforms (their cost
/// depends on the algorithm: FFTW, a GEMM or a tube kernel), elementwise passes (softmax, LayerNorm, activations),
/// and the tensor-network layers' own contractions (TSA, MPO, the multi-linear attention's core).
#include <atomic>
#include <cstdint>

namespace tprod::nn {

namespace detail {
inline std::atomic<std::uint64_t> issued_macs{0};
/// Records n multiply-adds issued by a layer.
inline void tally_macs(std::uint64_t n) { issued_macs.fetch_add(n, std::memory_order_relaxed); }
}  // namespace detail

/// @brief The multiply-adds issued by the nn layers, in the whole process, since construction (or reset).
///
///     nn::mac_counter macs;
///     nn::encoder_layer_forward(prm, x, batch);
///     macs.count();  // == batch · nn::encoder_layer_macs(prm.config, T).gemm()
class mac_counter {
 public:
  mac_counter() : start_(detail::issued_macs.load(std::memory_order_relaxed)) {}
  std::uint64_t count() const { return detail::issued_macs.load(std::memory_order_relaxed) - start_; }
  void reset() { start_ = detail::issued_macs.load(std::memory_order_relaxed); }

 private:
  std::uint64_t start_;
};

}  // namespace tprod::nn
