// expect: only a standard attention layer .identity transform, p = 1. has plain
// SPDX-License-Identifier: Apache-2.0
// An L-product attention layer under the DCT keeps its weights in the transform domain, where the slices are not
// the heads of one attention: taking W^Q, W^K, W^V, W^O out of it is refused at compile time.
#include "tprod/nn/attention_weights.hpp"
#include "tprod/transform/dct.hpp"

void take_weights_of_dct_layer(const tprod::nn::attention_params<float, tprod::dct>& layer) {
  (void)tprod::nn::attention_weights_of(layer);
}
