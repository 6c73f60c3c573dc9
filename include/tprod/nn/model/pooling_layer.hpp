// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file pooling_layer.hpp
/// @brief Sequence pooling (pooling.hpp) and the flattening before a matrix head, as stateful layers.
///   mean:        (B·T)×d_s×p → B×d_s×p, the mean over each sequence's valid tokens (the batch's lengths);
///   class_token: (B·T)×d_s×p → B×d_s×p, the first token of every sequence;
///   flatten:     r×d_s×p → r×(d_s·p)×1, Mat_p of the pooled tensor, the input of a p = 1 head.
#include <string>

#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/pooling.hpp"
#include "tprod/nn/tensorize.hpp"

namespace tprod::nn {

enum class pooling { mean, class_token };

template <std::floating_point T, memory_space S = host_space>
struct pooling_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  pooling kind = pooling::mean;
  std::string name = "pool";

  explicit pooling_layer(pooling k, std::string layer_name = "pool") : kind(k), name(std::move(layer_name)) {}

  const tensor& forward(const tensor& x, const batch& b) {
    TPROD_EXPECTS(b.size > 0 && x.m() % b.size == 0, "nn::pooling_layer: input " + x.shape() +
                                                         " is not whole sequences of a batch of " +
                                                         std::to_string(b.size));
    length_ = x.m() / b.size;
    lengths_ = kind == pooling::mean ? b.lengths : std::vector<std::size_t>{};
    out_ = kind == pooling::mean ? mean_pool_forward(x, b.size, lengths_) : class_token_pool_forward(x, b.size);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    dx_ = kind == pooling::mean ? mean_pool_backward(dy, length_, lengths_) : class_token_pool_backward(dy, length_);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&&) {}

 private:
  std::size_t length_ = 0;
  std::vector<std::size_t> lengths_;
  tensor out_, dx_;
};

template <std::floating_point T, memory_space S = host_space>
struct flatten_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::string name = "flatten";

  const tensor& forward(const tensor& x, const batch&) {
    slices_ = x.p();
    out_ = slices_side_by_side(x);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    dx_ = slices_stacked(dy, slices_);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&&) {}

 private:
  std::size_t slices_ = 1;
  tensor out_, dx_;
};

}  // namespace tprod::nn
