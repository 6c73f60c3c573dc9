// expect-first: a learned transform .nn::learned_transform<T, S>. trains in its memory space S
// SPDX-License-Identifier: Apache-2.0
// A model built in device memory around a learned transform of the host (learned_transform<float>): the transform
// trains in its own space, so the builder refuses the pair, and its sentence is the first error the compiler shows
// (not the last of many). learned_transform<float, device_space> is the one for a model on the device.
#include "tprod/cuda.hpp"
#include "tprod/nn/learned_transform.hpp"
#include "tprod/nn/model/classifier.hpp"

void on_device() {
  tprod::nn::text_classifier_config c;
  c.slices = 4;
  const tprod::nn::learned_transform<float> l(4);
  auto model = tprod::nn::make_text_classifier<float>(c, l, tprod::device_space{});
  (void)model;
}
