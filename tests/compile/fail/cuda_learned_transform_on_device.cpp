// expect-first: a learned transform .nn::learned_transform. trains on the host only
// SPDX-License-Identifier: Apache-2.0
// A model with a learned transform built in device memory: the transform records its passes in host memory, so the
// builder refuses it, and its sentence is the first error the compiler shows (not the last of many).
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
