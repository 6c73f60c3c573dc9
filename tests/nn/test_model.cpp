// SPDX-License-Identifier: Apache-2.0
// The composition API: stateful layers, sequential models, the text and vision classifiers, dropout, parameter
// lists with stable addresses, gradient accumulation.
#include <doctest/doctest.h>

#include <set>

#include "model_test_util.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/param_count.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

TEST_CASE("text classifier: the backward pass is the gradient of the forward pass, every parameter") {
  for (const std::size_t p : {std::size_t(1), std::size_t(2)}) {
    CAPTURE(p);
    auto c = small_text_config();
    c.slices = p;
    auto model = nn::make_text_classifier<double>(c, tprod::dct{});
    auto f = model_map(model, small_text_batch(), nullptr);
    check_gradients(f, 11 + p);
  }
}

TEST_CASE("vision transformer (paper 001's layer, DCT over 3 channels): gradients of parameters and input") {
  auto model = nn::make_vit_classifier<double>(tprod::test::small_vit_config(), tprod::dct{});
  t3 x = random_tensor3<double>(2 * 4, 5, 3, 5);
  auto f = model_map(model, nn::batch{2, {}, {}, nn::phase::train}, &x);
  check_gradients(f, 21);
}

TEST_CASE("decoder stack: gradients of every parameter, the input and the memory (summed over the layers)") {
  const auto cfg = nn::paper000_config(8, 2, 8, 2, nn::activation::gelu);  // d_s = 4: a LayerNorm over 2 features
                                                                             // would output ±1 whatever its input
  std::vector<nn::decoder_params<double, tprod::dct>> layers;
  for (std::uint64_t i = 0; i < 2; ++i) layers.push_back(nn::make_decoder_params<double>(cfg, tprod::dct{}, 30 + i));
  nn::decoder_stack<double, tprod::dct> dec(std::move(layers));
  static_assert(nn::layer<decltype(dec), double>);
  t3 x = random_tensor3<double>(2 * 3, 4, 2, 41), memory = random_tensor3<double>(2 * 4, 4, 2, 42);
  const nn::batch b{2, {}, {3, 2}, nn::phase::train};
  diff_map f;
  auto params = nn::parameters<double>(dec);
  for (std::size_t i = 0; i < params.size(); ++i) {
    f.vars.push_back(params.values.tensors[i]);
    f.names.push_back(params.values.names[i]);
  }
  f.vars.push_back(&x);
  f.names.push_back("input");
  f.vars.push_back(&memory);
  f.names.push_back("memory");
  f.forward = [&] {
    dec.set_memory(memory, {4, 3});
    return t3(dec.forward(x, b));
  };
  f.backward = [&](const t3& w) {
    params.zero_grad();
    dec.set_memory(memory, {4, 3});
    dec.forward(x, b);
    const t3 dx = dec.backward(w);
    std::vector<t3> g;
    for (auto* t : params.grads.tensors) g.push_back(*t);
    g.push_back(dx);
    g.push_back(dec.memory_grad());
    return g;
  };
  check_gradients(f, 43);
  CHECK(params.values.names.front() == "decoder.0.self_attn.w_qkv");
  nn::decoder_stack<double, tprod::dct> unset(std::vector{nn::make_decoder_params<double>(cfg, tprod::dct{}, 1)});
  CHECK_THROWS_WITH_AS(unset.forward(x, b), doctest::Contains("set_memory"), tprod::shape_error);
}

TEST_CASE("sequential: forward equals the stateless layer functions chained by hand") {
  auto c = small_text_config();
  auto model = nn::make_text_classifier<double>(c, tprod::dct{});
  const auto b = small_text_batch(nn::phase::eval);
  const t3 logits = model.forward(t3(), b);

  auto& embed = model.get<0>().params.value;
  auto& pos = model.get<1>().params.value;
  auto& enc = model.get<3>();
  auto& head = model.get<6>().params.value;
  t3 x = nn::positional_forward(pos, nn::embedding_forward(embed, b.tokens, c.slices), b.size);
  for (std::size_t i = 0; i < enc.size(); ++i)
    x = nn::encoder_layer_forward(enc[i], x, b.size, nn::attention_mask{false, b.lengths}).first;
  const t3 pooled = nn::slices_side_by_side(nn::mean_pool_forward(x, b.size, b.lengths));
  const t3 expected = nn::linear_forward(head, pooled).first;
  CHECK(max_diff(logits, expected) <= 1e-13 * (1 + max_abs(expected)));
}

TEST_CASE("activation layer: σ forward and its gradient backward, in a network composed by hand") {
  using linear = nn::linear_layer<double, tprod::dct>;
  for (const auto a : {nn::activation::relu, nn::activation::gelu, nn::activation::gelu_tanh, nn::activation::tanh}) {
    CAPTURE(nn::name(a));
    nn::sequential<double, linear, nn::activation_layer<double>, linear> net(
        linear(nn::make_linear_params<double>(4, 6, 3, tprod::dct{}, 1), "fc1"), nn::activation_layer<double>(a),
        linear(nn::make_linear_params<double>(6, 2, 3, tprod::dct{}, 3), "fc2"));
    static_assert(nn::layer<nn::activation_layer<double>, double>);
    t3 x = random_tensor3<double>(5, 4, 3, 7);
    const nn::batch b{5, {}, {}, nn::phase::train};
    t3 hidden = nn::linear_forward(net.get<0>().params.value, x).first, activated;
    nn::activation_forward(a, hidden, activated);
    const t3 expected = nn::linear_forward(net.get<2>().params.value, activated).first;
    const t3 y = net.forward(x, b);
    CHECK(max_diff(y, expected) <= 1e-14 * (1 + max_abs(expected)));
    CHECK(nn::parameters<double>(net).values.names ==
          std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
    auto f = model_map(net, b, &x);
    check_gradients(f, 51);
    nn::activation_layer<double> alone(a);
    alone.forward(x, b);
    CHECK_THROWS_WITH_AS(alone.backward(random_tensor3<double>(5, 4, 2, 8)), doctest::Contains("5x4x3"),
                         tprod::shape_error);
  }
}

TEST_CASE("gradients accumulate: two half batches (scaled by 1/2) give the full batch's gradient") {
  auto c = small_text_config();
  auto model = nn::make_text_classifier<double>(c, tprod::dct{});
  auto params = nn::parameters<double>(model);
  nn::batch full{4, {}, {5, 2, 4, 3}, nn::phase::train};
  for (std::size_t i = 0; i < 20; ++i) full.tokens.push_back((i * 5 + 1) % 11);
  const std::vector<std::size_t> labels{0, 2, 1, 2};
  params.zero_grad();
  nn::classification_step(model, t3(), full, labels);
  std::vector<t3> expected;
  for (auto* g : params.grads.tensors) expected.push_back(*g);

  params.zero_grad();
  for (std::size_t half = 0; half < 2; ++half) {
    nn::batch b{2, {full.tokens.begin() + std::ptrdiff_t(10 * half), full.tokens.begin() + std::ptrdiff_t(10 * half + 10)},
                {full.lengths[2 * half], full.lengths[2 * half + 1]}, nn::phase::train};
    nn::classification_step(model, t3(), b, {labels[2 * half], labels[2 * half + 1]});
  }
  params.scale_grads(0.5);
  for (std::size_t i = 0; i < params.size(); ++i) {
    CAPTURE(params.grads.names[i]);
    CHECK(max_diff(*params.grads.tensors[i], expected[i]) <= 1e-13 * (1 + max_abs(expected[i])));
  }
  // and a repeated backward pass adds the same gradient again
  params.zero_grad();
  nn::classification_step(model, t3(), full, labels);
  nn::classification_step(model, t3(), full, labels);
  for (std::size_t i = 0; i < params.size(); ++i)
    CHECK(max_diff(*params.grads.tensors[i], 2.0 * expected[i]) <= 1e-13 * (1 + max_abs(expected[i])));
}

TEST_CASE("parameter tree: unique dotted names, the encoder's count, addresses that survive a move") {
  auto c = small_text_config();
  auto model = nn::make_text_classifier<double>(c, tprod::dct{});
  auto params = nn::parameters<double>(model);
  const std::set<std::string> names(params.values.names.begin(), params.values.names.end());
  CHECK(names.size() == params.size());
  for (const char* n : {"embed.table", "pos.alpha", "encoder.0.attn.w_qkv", "encoder.1.ffn.b2", "encoder.1.ln2.beta",
                        "head.weight", "head.bias"})
    CHECK(names.count(n) == 1);
  std::size_t encoder = 0;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params.values.names[i].rfind("encoder.", 0) == 0) encoder += params.values.tensors[i]->size();
  const auto cfg = nn::paper000_config(c.width, c.heads, c.hidden, c.slices, c.act);
  CHECK(encoder == nn::encoder_param_count(cfg, c.layers));
  CHECK(params.count() == encoder + c.vocabulary * c.width + c.slices + (c.width + 1) * c.classes);

  // The optimizer's references stay valid when the model moves.
  auto moved = std::move(model);
  CHECK(params.values.tensors.back() == &moved.get<6>().params.value.bias.data());
  const double before = moved.get<6>().params.value.bias.data()(0, 0, 0);
  params.grads.tensors.back()->elements().setOnes();
  nn::adamw<double> opt({0.1, 0.9, 0.999, 1e-8, 0});
  nn::step(opt, params);
  CHECK(moved.get<6>().params.value.bias.data()(0, 0, 0) == doctest::Approx(before - 0.1));
}

TEST_CASE("dropout: identity in evaluation, inverted scaling and the same mask backward, reproducible by seed") {
  const tensor3<float> x = tprod::random_tensor3<float>(100, 50, 20, 4);
  nn::dropout<float> d(0.25, 42);
  nn::batch eval{1, {}, {}, nn::phase::eval}, train{1, {}, {}, nn::phase::train};
  CHECK(&d.forward(x, eval) == &x);
  const tensor3<float> y = d.forward(x, train);
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y.data()[i] == 0) ++dropped;
    else CHECK(y.data()[i] == doctest::Approx(x.data()[i] / 0.75f));
  }
  // Binomial(n, 0.25): 5 standard deviations either side.
  const double n = double(x.size()), sd = std::sqrt(n * 0.25 * 0.75);
  CHECK(std::abs(double(dropped) - 0.25 * n) < 5 * sd);
  tensor3<float> ones(100, 50, 20);
  ones.elements().setOnes();
  const tensor3<float> mask = d.backward(ones);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK((mask.data()[i] == 0) == (y.data()[i] == 0 && x.data()[i] != 0));
  nn::dropout<float> again(0.25, 42);
  CHECK(max_diff(again.forward(x, train), y) == 0);
  CHECK(max_diff(again.forward(x, train), y) > 0);  // the next pass draws a new mask
  CHECK_THROWS_AS(nn::dropout<float>(1.0, 1), tprod::shape_error);
  CHECK_THROWS_AS(nn::dropout<float>(-0.1, 1), tprod::shape_error);
}

TEST_CASE("a few AdamW steps fit a fixed batch (the training loop is wired end to end)") {
  auto c = small_text_config();
  auto model = nn::make_text_classifier<double>(c, tprod::dct{});
  auto params = nn::parameters<double>(model);
  nn::adamw<double> opt({1e-2, 0.9, 0.999, 1e-8, 0});
  const auto b = small_text_batch();
  const std::vector<std::size_t> labels{2, 0, 1};
  double first = 0, last = 0;
  for (int s = 0; s < 40; ++s) {
    params.zero_grad();
    last = nn::classification_step(model, t3(), b, labels).loss;
    if (s == 0) first = last;
    nn::step(opt, params);
  }
  CHECK(last < 0.2 * first);
}

TEST_CASE("composition errors name what is wrong") {
  using dct_stack = nn::encoder_stack<double, tprod::dct>;
  CHECK_THROWS_AS(dct_stack({}), tprod::shape_error);
  auto c = small_text_config();
  c.heads = 3;  // p = 2 does not divide H = 3
  CHECK_THROWS_AS(nn::make_text_classifier<double>(c, tprod::dct{}), tprod::shape_error);
  nn::class_token_layer<double> cls(nn::make_class_token<double>(4, 2, 1));
  CHECK_THROWS_AS(cls.forward(t3(6, 4, 2), nn::batch{2, {}, {3, 3}, nn::phase::train}), tprod::shape_error);
  auto model = nn::make_text_classifier<double>(small_text_config(), tprod::dct{});
  auto b = small_text_batch();
  b.tokens[4] = 11;  // outside the vocabulary
  CHECK_THROWS_WITH_AS(model.forward(t3(), b), doctest::Contains("token 11 at position 4"), tprod::shape_error);
  auto good = small_text_batch();
  model.get<6>().params.value.weight.data()(0, 0, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(nn::classification_step(model, t3(), good, {0, 1, 2}), tprod::numerical_error);
}

TEST_CASE("text classifier config: metadata round trip and clear errors") {
  auto c = small_text_config();
  const auto m = nn::to_metadata(c);
  const auto back = nn::text_classifier_config_from(m);
  CHECK(back.width == c.width);
  CHECK(back.slices == c.slices);
  CHECK(back.positions == c.positions);
  CHECK(back.learnable_positions);
  auto broken = m;
  broken["layers"] = "two";
  CHECK_THROWS_WITH_AS(nn::text_classifier_config_from(broken), doctest::Contains("'layers'"), tprod::shape_error);
  broken = m;
  broken.erase("positions");
  CHECK_THROWS_WITH_AS(nn::text_classifier_config_from(broken), doctest::Contains("'positions'"), tprod::shape_error);
}
