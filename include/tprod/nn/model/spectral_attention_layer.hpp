// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_attention_layer.hpp
/// @brief Multi-head tensorized spectral attention (spectral_attention.hpp, paper 002 Alg. 1) as a stateful layer:
/// (B·T)×I×1 → (B·T)×J_o×1, with the bidirectional time graph Ω of the sequence length (built once per length) and
/// the batch's lengths as the padding of Θ.
///
/// The TSA parameters are MPO cores (ndtensor), while the optimizer and the checkpoints work on tensor3. The layer
/// therefore keeps every core (and α) as a tensor3 of the same entries in the same column-major order — a core
/// R_{n−1}×I_n×J_n×R_n as (R_{n−1}·I_n)×J_n×R_n, α as K×1×1 — which is what `for_each_parameter` hands out and
/// what the optimizer updates. Each forward pass copies those few hundred numbers into the cores; each backward
/// pass adds the cores' fresh gradients into the tensor3 gradients. (Copies rather than views: ndtensor owns its
/// storage, and the copy costs nothing next to the L×L attention.)
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprod/graph/time_graph.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/spectral_attention.hpp"

namespace tprod::nn {

template <std::floating_point T>
class spectral_attention_layer {
 public:
  std::string name = "tsa";

  /// @param prm the heads' MPO projections, their filters and the output projection (make_tsa_params)
  /// @param damping c of the time graph, ω_{l₁,l₂} = ½c^{|l₂−l₁|} (bidirectional_time_adjacency).
  /// @param layer_name the prefix of its parameters' names
  /// @throws shape_error unless 0 < c < 1, or when the heads' widths do not fit the projection.
  spectral_attention_layer(tsa_params<T> prm, double damping, std::string layer_name = "tsa")
      : name(std::move(layer_name)), prm_(std::move(prm)), damping_(damping) {
    TPROD_EXPECTS(damping > 0 && damping < 1, "nn::spectral_attention_layer: the time graph's damping c = " +
                                                  number_text(damping) + " must lie in (0, 1)");
    TPROD_EXPECTS(!prm_.heads.empty(), "nn::spectral_attention_layer: the layer has no heads");
    std::size_t width = 0;
    for (const auto& h : prm_.heads) width += h.value.out_width();
    TPROD_EXPECTS(width == prm_.projection.in_width(),
                  "nn::spectral_attention_layer: the heads output " + std::to_string(width) +
                      " features but the projection takes " + std::to_string(prm_.projection.in_width()));
    prm_.for_each([&](const std::string& n, ndtensor<T>& core) {
      names_.push_back(n);
      values_.push_back(mirror_of(core));
      grads_.emplace_back(values_.back().m(), values_.back().n(), values_.back().p());
    });
  }

  /// @brief The parameters as the stateless functions take them, with the values the optimizer last wrote.
  const tsa_params<T>& params() {
    copy_values_into_cores();
    return prm_;
  }
  std::size_t in_width() const { return prm_.heads.front().key.in_width(); }
  std::size_t out_width() const { return prm_.projection.out_width(); }
  std::size_t parameter_count() const { return prm_.parameter_count(); }

  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    TPROD_EXPECTS(x.p() == 1 && x.n() == in_width(),
                  "nn::spectral_attention_layer: input " + x.shape() + " must be (B·T)x" +
                      std::to_string(in_width()) + "x1 (token vectors of the key and value weights' width, p = 1)");
    TPROD_EXPECTS(b.size > 0 && x.m() % b.size == 0, "nn::spectral_attention_layer: input " + x.shape() +
                                                         " is not whole sequences of a batch of " +
                                                         std::to_string(b.size));
    const std::size_t steps = x.m() / b.size;
    if (std::size_t(omega_.rows()) != steps) omega_ = bidirectional_time_adjacency<T>(steps, damping_);
    copy_values_into_cores();
    tsa_forward<T>(prm_, x.slice(0), omega_, b.lengths, y_, saved_, ws_);
    detail::ensure_shape(out_, std::size_t(y_.rows()), std::size_t(y_.cols()), 1);
    out_.slice(0) = y_;
    return out_;
  }

  const tensor3<T>& backward(const tensor3<T>& dy) {
    tsa_backward<T>(prm_, saved_, dy.slice(0), g_, ws_);
    std::size_t i = 0;
    g_.d_params.for_each([&](const std::string&, ndtensor<T>& d) {
      grads_[i++].elements() += Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(d.data(), Eigen::Index(d.size()));
    });
    detail::ensure_shape(dx_, std::size_t(g_.d_input.rows()), std::size_t(g_.d_input.cols()), 1);
    dx_.slice(0) = g_.d_input;
    return dx_;
  }

  /// f(name, value, gradient): "<name>.head_<h>.key.core_<n>", "….value.core_<n>", "….alpha" (a learnable
  /// filter only), "<name>.projection.core_<n>".
  template <class F>
  void for_each_parameter(F&& f) {
    for (std::size_t i = 0; i < values_.size(); ++i) f(name + "." + names_[i], values_[i], grads_[i]);
  }

 private:
  /// A tensor3 holding the ndtensor's entries in its column-major order: the last two modes as columns and
  /// slices, the rest as rows (a vector as K×1×1).
  static tensor3<T> mirror_of(const ndtensor<T>& a) {
    const nd_shape s = shape_of(a);
    tensor3<T> t = s.size() < 2 ? tensor3<T>(a.size(), 1, 1)
                                : tensor3<T>(a.size() / (s[s.size() - 2] * s.back()), s[s.size() - 2], s.back());
    std::copy(a.data(), a.data() + a.size(), t.data());
    return t;
  }

  void copy_values_into_cores() {
    std::size_t i = 0;
    prm_.for_each([&](const std::string&, ndtensor<T>& core) {
      std::copy(values_[i].data(), values_[i].data() + values_[i].size(), core.data());
      ++i;
    });
  }

  tsa_params<T> prm_;
  double damping_;
  std::vector<std::string> names_;
  std::vector<tensor3<T>> values_, grads_;
  dense_matrix<T> omega_;
  tsa_saved<T> saved_;  // reused from step to step with ws_, g_ and y_: no L×L allocation once sized
  tsa_workspace<T> ws_;
  tsa_grads<T> g_;
  dense_matrix<T> y_;
  tensor3<T> out_, dx_;
};

}  // namespace tprod::nn
