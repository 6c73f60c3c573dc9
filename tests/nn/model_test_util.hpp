// SPDX-License-Identifier: Apache-2.0
#pragma once
// A composition-API model (any nn::layer) as a differentiable map of its parameters, for check_gradients.
#include "nn_test_util.hpp"
#include "small_models.hpp"
#include "tprod/nn/model/classifier.hpp"

namespace nn_test {

/// The whole model as a differentiable map of all its parameters (and of its input, when it has one): the
/// backward pass zeroes the gradients, runs forward again (so the saved state is that of the current values) and
/// returns the accumulated gradients.
template <class Model>
diff_map model_map(Model& model, const tprod::nn::batch& b, t3* input) {
  diff_map f;
  auto params = tprod::nn::parameters<double>(model);
  for (std::size_t i = 0; i < params.size(); ++i) {
    f.vars.push_back(params.values.tensors[i]);
    f.names.push_back(params.values.names[i]);
  }
  if (input) {
    f.vars.push_back(input);
    f.names.push_back("input");
  }
  const t3 none;
  f.forward = [&model, b, input, none] { return t3(model.forward(input ? *input : none, b)); };
  f.backward = [&model, b, input, none, params](const t3& w) mutable {
    params.zero_grad();
    model.forward(input ? *input : none, b);
    const t3 dx = model.backward(w);
    std::vector<t3> g;
    for (auto* t : params.grads.tensors) g.push_back(*t);
    if (input) g.push_back(dx);
    return g;
  };
  return f;
}

using tprod::test::small_text_batch;
using tprod::test::small_text_config;

}  // namespace nn_test
