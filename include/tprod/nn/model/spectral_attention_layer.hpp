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
///
/// In memory space S other than the host (`spectral_attention_layer<T, device_space>`), the tensor3 mirrors, Ω and
/// the activations live in S and the passes are spectral_attention.hpp's functions on tsa_params_in<T, S>, each
/// forward pass building the cores from the mirrors by a copy in S; the attention graph's ε is ReLU there.
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

template <std::floating_point T, memory_space S = host_space>
class spectral_attention_layer {
  static constexpr bool on_host = std::same_as<S, host_space>;

 public:
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::string name = "tsa";

  /// @param prm the heads' MPO projections, their filters and the output projection (make_tsa_params)
  /// @param damping c of the time graph, ω_{l₁,l₂} = ½c^{|l₂−l₁|} (bidirectional_time_adjacency).
  /// @param layer_name the prefix of its parameters' names
  /// @throws shape_error unless 0 < c < 1, or when the heads' widths do not fit the projection, or (outside the host)
  ///         for a custom ε.
  spectral_attention_layer(tsa_params<T> prm, double damping, std::string layer_name = "tsa")
      : name(std::move(layer_name)), prm_(std::move(prm)), damping_(damping) {
    TPROD_EXPECTS(damping > 0 && damping < 1, "nn::spectral_attention_layer: the time graph's damping c = " +
                                                  number_text(damping) + " must lie in (0, 1)");
    detail::tsa_heads_width(prm_, "nn::spectral_attention_layer");
    if constexpr (!on_host) {
      for (const auto& h : prm_.heads)
        TPROD_EXPECTS(h.epsilon.is_relu(), "nn::spectral_attention_layer: outside the host the attention graph's ε "
                                           "is ReLU; a custom tsa_activation trains on the host");
      in_space_ = copy<S>(prm_);
    }
    prm_.for_each([&](const std::string& n, ndtensor<T>& core) {
      names_.push_back(n);
      values_.push_back(tprod::detail::in_space<S>(mirror_of(core)));
      grads_.emplace_back(values_.back().m(), values_.back().n(), values_.back().p());
    });
  }

  /// @brief The parameters as the host's stateless functions take them, with the values the optimizer last wrote
  ///        (copied to the host outside it).
  const tsa_params<T>& params() {
    std::size_t i = 0;
    prm_.for_each([&](const std::string&, ndtensor<T>& core) {
      const tensor3<T> v = tprod::detail::in_space<host_space>(values_[i++]);
      std::copy(v.data(), v.data() + v.size(), core.data());
    });
    return prm_;
  }
  std::size_t in_width() const { return prm_.heads.front().key.in_width(); }
  std::size_t out_width() const { return prm_.projection.out_width(); }
  std::size_t parameter_count() const { return prm_.parameter_count(); }

  const tensor& forward(const tensor& x, const batch& b) {
    TPROD_EXPECTS(x.p() == 1 && x.n() == in_width(),
                  "nn::spectral_attention_layer: input " + x.shape() + " must be (B·T)x" +
                      std::to_string(in_width()) + "x1 (token vectors of the key and value weights' width, p = 1)");
    TPROD_EXPECTS(b.size > 0 && x.m() % b.size == 0, "nn::spectral_attention_layer: input " + x.shape() +
                                                         " is not whole sequences of a batch of " +
                                                         std::to_string(b.size));
    const std::size_t steps = x.m() / b.size;
    if (std::size_t(omega_.rows()) != steps) {
      omega_ = bidirectional_time_adjacency<T>(steps, damping_);
      tensor3<T> om(steps, steps, 1);
      om.slice(0) = omega_;
      omega_in_ = tprod::detail::in_space<S>(std::move(om));
    }
    if constexpr (on_host) {
      copy_values_into_cores();
      tsa_forward<T>(prm_, x.slice(0), omega_, b.lengths, y_, saved_, ws_);
      detail::ensure_shape(out_, std::size_t(y_.rows()), std::size_t(y_.cols()), 1);
      out_.slice(0) = y_;
    } else {
      std::size_t i = 0;  // the cores from the mirrors the optimizer updates, by a copy in S
      in_space_.for_each([&](const std::string&, ndtensor_in<T, S>& core) { core = {core.shape(), values_[i++]}; });
      tsa_forward(in_space_, x, omega_in_, b.lengths, out_, saved_in_);
    }
    return out_;
  }

  const tensor& backward(const tensor& dy) {
    std::size_t i = 0;
    if constexpr (on_host) {
      tsa_backward<T>(prm_, saved_, dy.slice(0), g_, ws_);
      g_.d_params.for_each([&](const std::string&, ndtensor<T>& d) {
        grads_[i++].elements() +=
            Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(d.data(), Eigen::Index(d.size()));
      });
      detail::ensure_shape(dx_, std::size_t(g_.d_input.rows()), std::size_t(g_.d_input.cols()), 1);
      dx_.slice(0) = g_.d_input;
    } else {
      auto g = tsa_backward(in_space_, saved_in_, dy);
      g.d_params.for_each([&](const std::string&, ndtensor_in<T, S>& d) {
        tensor& grad = grads_[i++];
        axpy(tprod::detail::system_of<S>(), T(1), std::as_const(d).flat(),
             tensor3_view<T, dextents3, S>(grad.data(), grad.size(), 1, 1));
      });
      dx_ = std::move(g.d_input);
    }
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
  std::vector<tensor> values_, grads_;
  dense_matrix<T> omega_;
  tensor omega_in_;
  // the host's passes: reused from step to step with ws_, g_ and y_, so that no L×L matrix is allocated once sized
  tsa_saved<T> saved_;
  tsa_workspace<T> ws_;
  tsa_grads<T> g_;
  dense_matrix<T> y_;
  // the passes in S
  tsa_params_in<T, S> in_space_;
  tsa_saved_in<T, S> saved_in_;
  tensor out_, dx_;
};

}  // namespace tprod::nn
