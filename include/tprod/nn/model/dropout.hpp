// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dropout.hpp
/// @brief Inverted dropout as a stateful layer: in training every element is kept with probability 1 − r and
/// scaled by 1/(1 − r), so evaluation (the identity) needs no rescaling.
///
/// The mask of a training forward pass is drawn from the backend's generator (std::mt19937 on the host, cuRAND's
/// Philox on the device, so the two spaces draw different masks) seeded with (seed, n), n = batch::pass when the
/// caller sets it (nn::fit: the optimizer step) and otherwise the layer's count of its training passes, so a run is
/// reproducible from its seed, a resumed run draws the same masks, and evaluation passes in between change nothing.
#include <string>
#include <utility>

#include "tprod/backend/kernels/activation.hpp"
#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T, memory_space S = host_space>
struct dropout {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  double rate = 0;  ///< r, the probability of dropping an element
  std::uint64_t seed = 0;
  std::string name = "dropout";

  /// @throws shape_error unless 0 ≤ rate < 1.
  dropout(double r, std::uint64_t s, std::string layer_name = "dropout") : rate(r), seed(s), name(std::move(layer_name)) {
    TPROD_EXPECTS(r >= 0 && r < 1, "nn::dropout: rate " + number_text(r) + " must be in [0, 1)");
  }

  const tensor& forward(const tensor& x, const batch& b) {
    active_ = b.mode == phase::train && rate > 0;
    if (!active_) return x;
    const std::uint64_t n = b.pass.value_or(passes_++);
    detail::ensure_shape_like(mask_, x);
    detail::ensure_shape_like(out_, x);
    dropout_forward(tprod::detail::system_of<S>(), seed, n, rate, x.dynamic_view(), mask_.dynamic_view(),
                    out_.dynamic_view());
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    if (!active_) return dy;
    const auto sys = tprod::detail::system_of<S>();
    detail::ensure_shape_like(dx_, dy);
    copy(sys, dy.dynamic_view(), dx_.dynamic_view());
    multiply_elementwise(sys, std::as_const(mask_).dynamic_view(), dx_.dynamic_view());
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&&) {}

 private:
  bool active_ = false;
  std::uint64_t passes_ = 0;
  tensor mask_, out_, dx_;
};

}  // namespace tprod::nn
