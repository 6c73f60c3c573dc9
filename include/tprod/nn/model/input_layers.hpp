// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file input_layers.hpp
/// @brief The layers at the input of a sequence model, as stateful layers (layer.hpp): the token embedding
/// (a lookup, then Ten_p), the segment embedding that BERT adds to it, the class token that paper 001 prepends to
/// every sequence, and the positional encodings (paper 000's slice-aware sinusoidal one, fixed or with learnable α,
/// and the learned table).
#include <string>
#include <utility>

#include "tprod/nn/embedding.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/positional.hpp"

namespace tprod::nn {

/// @brief 𝒳 = Ten_p(E[tokens]) for the batch's B·T tokens (x is ignored); backward scatters d𝒳 into dE.
template <std::floating_point T, memory_space S = host_space>
struct token_embedding {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  trainable<T, embedding_params<T, S>> params;
  std::size_t slices;  ///< p
  std::string name = "embed";

  token_embedding(embedding_params<T, S> e, std::size_t p, std::string layer_name = "embed")
      : params(std::move(e)), slices(p), name(std::move(layer_name)) {
    TPROD_EXPECTS(p > 0, "nn::token_embedding: p must be positive");
  }

  const tensor& forward(const tensor&, const batch& b) {
    tokens_ = b.tokens;
    out_ = embedding_forward(params.value, tokens_, slices);
    return out_;
  }
  /// Returns an empty tensor: the input was token ids.
  const tensor& backward(const tensor& dy) {
    embedding_backward_add(params.value, tokens_, dy, params.grad);
    return none_;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
  }

 private:
  std::vector<std::size_t> tokens_;
  tensor out_, none_;
};

/// @brief 𝒳 + Ten_p(S[segments]) for the batch's B·T segment ids (BERT's token-type embedding, S a d×K table;
/// a batch without segment ids is all segment 0); backward passes d𝒳 through and scatters it into dS.
template <std::floating_point T, memory_space S = host_space>
struct segment_embedding {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  trainable<T, embedding_params<T, S>> params;
  std::size_t slices;  ///< p
  std::string name = "segment";

  segment_embedding(embedding_params<T, S> e, std::size_t p, std::string layer_name = "segment")
      : params(std::move(e)), slices(p), name(std::move(layer_name)) {
    TPROD_EXPECTS(p > 0, "nn::segment_embedding: p must be positive");
  }

  const tensor& forward(const tensor& x, const batch& b) {
    const std::size_t rows = x.m();
    TPROD_EXPECTS(b.segments.empty() || b.segments.size() == rows,
                  "nn::segment_embedding '" + name + "': " + std::to_string(b.segments.size()) +
                      " segment ids for an input of " + std::to_string(rows) + " tokens");
    segments_ = b.segments.empty() ? std::vector<std::size_t>(rows, 0) : b.segments;
    for (std::size_t r = 0; r < rows; ++r)
      TPROD_EXPECTS(segments_[r] < params.value.vocabulary(),
                    "nn::segment_embedding '" + name + "': segment id " + std::to_string(segments_[r]) +
                        " at position " + std::to_string(r) + " is outside the " +
                        std::to_string(params.value.vocabulary()) + " segment types");
    out_ = embedding_forward(params.value, segments_, slices);
    out_ += x;
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    embedding_backward_add(params.value, segments_, dy, params.grad);
    return dy;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
  }

 private:
  std::vector<std::size_t> segments_;
  tensor out_;
};

/// @brief [𝒯_cls; 𝒳_b] for every sequence b: (B·T)×d_s×p → (B·(T+1))×d_s×p (paper 001 §5.3).
/// The class token occupies position 0, so later layers see sequences of length T + 1 and the batch must not
/// carry padding lengths (images have none).
template <std::floating_point T, memory_space S = host_space>
struct class_token_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  trainable<T, class_token_params<T, S>> params;
  std::string name = "cls";

  explicit class_token_layer(class_token_params<T, S> c, std::string layer_name = "cls")
      : params(std::move(c)), name(std::move(layer_name)) {}

  const tensor& forward(const tensor& x, const batch& b) {
    TPROD_EXPECTS(b.lengths.empty(), "nn::class_token_layer: a batch with padding lengths cannot take a class token");
    batch_ = b.size;
    out_ = prepend_class_token(params.value, x, batch_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    auto [dx, dtoken] = prepend_class_token_backward(dy, batch_);
    params.accumulate(dtoken);
    dx_ = std::move(dx);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
  }

 private:
  std::size_t batch_ = 0;
  tensor out_, dx_;
};

/// @brief 𝒳 + 𝒫 on every sequence, 𝒫 sinusoidal (sinusoidal_positional_params) or learned
/// (learned_positional_params); d𝒳 = d𝒴 is passed through unchanged. The memory space is P's.
template <std::floating_point T, class P>
struct positional_layer {
  using memory_space_type = space_of_part_t<P>;
  using tensor = tensor3<T, dextents3, memory_space_type>;
  trainable<T, P> params;
  std::string name = "pos";

  explicit positional_layer(P prm, std::string layer_name = "pos")
      : params(std::move(prm)), name(std::move(layer_name)) {}

  const tensor& forward(const tensor& x, const batch& b) {
    batch_ = b.size;
    out_ = positional_forward(params.value, x, batch_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    auto g = positional_backward(params.value, dy, batch_);
    params.accumulate(g);
    return dy;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
  }

 private:
  std::size_t batch_ = 0;
  tensor out_;
};

}  // namespace tprod::nn
