// expect: this encoder's attention runs on the host only .multilinear attention has no device version.
// SPDX-License-Identifier: Apache-2.0
// An encoder layer with multilinear attention copied to the GPU: refused at compile time with one sentence, since
// multilinear attention has no device version.
#include "tprod/cuda.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/transform/dct.hpp"

using multilinear = tprod::nn::multilinear_attention_params<float, tprod::dct>;

void to_gpu(const tprod::nn::encoder_params<float, tprod::dct, multilinear>& p) {
  (void)copy(p, tprod::device_space{});
}
