// expect: every layer must live in the same memory space
// SPDX-License-Identifier: Apache-2.0
// A host-only layer (the activation layer) after a layer on the GPU: the model refuses the mix at compile time.
#include "tprod/cuda.hpp"
#include "tprod/nn/model/activation_layer.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/sequential.hpp"
#include "tprod/transform/dct.hpp"

void mixed(tprod::nn::linear_layer<float, tprod::dct, tprod::device_space> linear) {
  tprod::nn::sequential<float, decltype(linear), tprod::nn::activation_layer<float>> model(
      std::move(linear), tprod::nn::activation_layer<float>(tprod::nn::activation::relu));
  (void)model;
}
