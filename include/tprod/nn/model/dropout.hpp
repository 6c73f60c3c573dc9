#pragma once
/// @file dropout.hpp
/// @brief Inverted dropout as a stateful layer: in training every element is kept with probability 1 − r and
/// scaled by 1/(1 − r), so evaluation (the identity) needs no rescaling.
///
/// The mask of a training forward pass is drawn from a generator seeded with (seed, n), n = batch::pass when the
/// caller sets it (nn::fit: the optimizer step) and otherwise the layer's count of its training passes, so a run is
/// reproducible from its seed, a resumed run draws the same masks, and evaluation passes in between change nothing.
#include <algorithm>
#include <random>
#include <string>

#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T>
struct dropout {
  double rate = 0;  ///< r, the probability of dropping an element
  std::uint64_t seed = 0;
  std::string name = "dropout";

  /// @throws shape_error unless 0 ≤ rate < 1.
  dropout(double r, std::uint64_t s, std::string layer_name = "dropout") : rate(r), seed(s), name(std::move(layer_name)) {
    TPROD_EXPECTS(r >= 0 && r < 1, "nn::dropout: rate " + number_text(r) + " must be in [0, 1)");
  }

  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    active_ = b.mode == phase::train && rate > 0;
    if (!active_) return x;
    const std::uint64_t n = b.pass.value_or(passes_++);
    std::seed_seq seq{std::uint32_t(seed), std::uint32_t(seed >> 32), std::uint32_t(n), std::uint32_t(n >> 32)};
    std::mt19937 rng(seq);
    // Element kept when a uniform 32-bit draw is at least r·2³² (one draw per element, no floating point).
    const auto threshold = std::uint32_t(std::min(rate * 4294967296.0, 4294967295.0));
    const T scale = T(1 / (1 - rate));
    detail::ensure_shape_like(mask_, x);
    for (std::size_t i = 0; i < mask_.size(); ++i) mask_.data()[i] = rng() >= threshold ? scale : T(0);
    detail::ensure_shape_like(out_, x);
    out_.elements() = x.elements().cwiseProduct(mask_.elements());
    return out_;
  }
  const tensor3<T>& backward(const tensor3<T>& dy) {
    if (!active_) return dy;
    detail::ensure_shape_like(dx_, dy);
    dx_.elements() = dy.elements().cwiseProduct(mask_.elements());
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&&) {}

 private:
  bool active_ = false;
  std::uint64_t passes_ = 0;
  tensor3<T> mask_, out_, dx_;
};

}  // namespace tprod::nn
