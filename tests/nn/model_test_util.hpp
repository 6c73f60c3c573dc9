#pragma once
// A composition-API model (any nn::layer) as a differentiable map of its parameters, for check_gradients.
#include "nn_test_util.hpp"
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

/// A small text classifier in double: V = 11, d = 8 folded into p = 2 slices, H = 2 heads, d_ff = 8, two layers,
/// learnable α (so every layer kind has a trainable tensor), no dropout.
inline tprod::nn::text_classifier_config small_text_config(std::uint64_t seed = 3) {
  tprod::nn::text_classifier_config c;
  c.vocabulary = 11;
  c.classes = 3;
  c.width = 8;
  c.heads = 2;
  c.hidden = 8;
  c.layers = 2;
  c.slices = 2;
  c.positions = tprod::nn::alpha_strategy::exponential;
  c.learnable_positions = true;
  c.dropout = 0;
  c.seed = seed;
  return c;
}

/// B = 3 sequences of T = 5 tokens (ids below 11), the first padded after 5, the others after 3 and 4 tokens.
inline tprod::nn::batch small_text_batch(tprod::nn::phase mode = tprod::nn::phase::train) {
  tprod::nn::batch b{3, {}, {5, 3, 4}, mode};
  for (std::size_t i = 0; i < 15; ++i) b.tokens.push_back((i * 7 + 3) % 11);
  return b;
}

}  // namespace nn_test
