// SPDX-License-Identifier: Apache-2.0
// Embedding, class token, pooling, cross-entropy, AdamW, clipping, schedules, parameter counts.
#include <doctest/doctest.h>

#include <numbers>

#include "nn_test_util.hpp"
#include "tprod/nn/embedding.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/loss.hpp"
#include "tprod/nn/optim.hpp"
#include "tprod/nn/param_count.hpp"
#include "tprod/nn/pooling.hpp"
#include "tprod/nn/schedule.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

TEST_CASE("token embedding: lookup, padding to p slices, and the scatter-add gradient") {
  auto e = nn::make_embedding_params<double>(7, 5, 1);
  const std::vector<std::size_t> tokens{3, 0, 3, 6};
  const t3 x = nn::embedding_forward(e, tokens, 2);  // d = 5, p = 2 → d_s = 3, one padding column
  CHECK(x.n() == 3);
  for (std::size_t r = 0; r < tokens.size(); ++r)
    for (std::size_t c = 0; c < 5; ++c) CHECK(x(r, c % 3, c / 3) == e.table(c, tokens[r], 0));
  CHECK(x(1, 2, 1) == 0.0);
  // the lookup is linear in the table: ⟨E[tokens], W⟩ = ⟨E, dE⟩
  const t3 w = random_tensor3<double>(4, 3, 2, 2);
  const auto g = nn::embedding_backward(e, tokens, w);
  CHECK(dot(x, w) == doctest::Approx(dot(e.table, g.table)).epsilon(1e-13));
  CHECK(g.table(4, 5, 0) == 0.0);  // token 5 was not looked up
  CHECK_THROWS_AS(nn::embedding_forward(e, {7}, 2), tprod::shape_error);
}

TEST_CASE("class token: prepended to every sequence, gradient is the sum over sequences") {
  auto c = nn::make_class_token<double>(3, 2, 5, 1.0);
  const t3 x = random_tensor3<double>(4, 3, 2, 6);  // two sequences of two tokens
  const t3 y = nn::prepend_class_token(c, x, 2);
  CHECK(y.m() == 6);
  CHECK(y(0, 1, 1) == c.token(0, 1, 1));
  CHECK(y(3, 2, 0) == c.token(0, 2, 0));
  CHECK(y(4, 0, 1) == x(2, 0, 1));
  const t3 w = random_tensor3<double>(6, 3, 2, 7);
  const auto [dx, dc] = nn::prepend_class_token_backward(w, 2);
  CHECK(dot(y, w) == doctest::Approx(dot(x, dx) + dot(c.token, dc.token)).epsilon(1e-13));
}

TEST_CASE("pooling: masked mean and class-token pooling, with adjoint backward passes") {
  const t3 x = random_tensor3<double>(8, 3, 2, 1);  // B = 2, T = 4
  const std::vector<std::size_t> lengths{2, 4};
  const t3 m = nn::mean_pool_forward(x, 2, lengths);
  CHECK(m(0, 1, 1) == doctest::Approx((x(0, 1, 1) + x(1, 1, 1)) / 2));
  CHECK(m(1, 2, 0) == doctest::Approx((x(4, 2, 0) + x(5, 2, 0) + x(6, 2, 0) + x(7, 2, 0)) / 4));
  const t3 w = random_tensor3<double>(2, 3, 2, 2);
  CHECK(dot(m, w) == doctest::Approx(dot(x, nn::mean_pool_backward(w, 4, lengths))).epsilon(1e-13));
  CHECK(dot(nn::mean_pool_forward(x, 2), w) == doctest::Approx(dot(x, nn::mean_pool_backward(w, 4))).epsilon(1e-13));
  const t3 c = nn::class_token_pool_forward(x, 2);
  CHECK(c(1, 0, 1) == x(4, 0, 1));
  CHECK(dot(c, w) == doctest::Approx(dot(x, nn::class_token_pool_backward(w, 4))).epsilon(1e-13));
  CHECK_THROWS_AS(nn::mean_pool_forward(x, 2, {5, 1}), tprod::shape_error);
  CHECK_THROWS_AS(nn::mean_pool_forward(x, 3), tprod::shape_error);
}

TEST_CASE("softmax cross-entropy: value, gradient, stability") {
  t3 z(2, 3, 1);
  auto r = nn::softmax_cross_entropy(z, {0, 2});
  CHECK(r.loss == doctest::Approx(std::log(3.0)));  // uniform logits
  z = random_tensor3<double>(3, 4, 1, 3) * 4.0;
  const std::vector<std::size_t> labels{1, 3, 0};
  r = nn::softmax_cross_entropy(z, labels);
  const double h = 1e-6;
  for (std::size_t i = 0; i < z.size(); ++i) {
    t3 zp = z, zm = z;
    zp.data()[i] += h;
    zm.data()[i] -= h;
    const double fd = (nn::softmax_cross_entropy(zp, labels).loss - nn::softmax_cross_entropy(zm, labels).loss) / (2 * h);
    CHECK(fd == doctest::Approx(r.d_logits.data()[i]).epsilon(1e-7));
  }
  t3 big(1, 2, 1);
  big(0, 0, 0) = 1000;
  big(0, 1, 0) = 0;
  CHECK(nn::softmax_cross_entropy(big, {1}).loss == doctest::Approx(1000.0));
  CHECK(nn::softmax_cross_entropy(big, {0}).predicted[0] == 0);
  CHECK_THROWS_AS(nn::softmax_cross_entropy(big, {2}), tprod::shape_error);
  CHECK_THROWS_AS(nn::softmax_cross_entropy(big, {0, 1}), tprod::shape_error);
}

TEST_CASE("softmax cross-entropy: rows labelled ignore_label take no part") {
  // The loss over rows {0, 2, 3} with row 1 ignored equals the loss of the 3-row tensor without row 1, and row 1's
  // gradient is zero: an independent computation by dropping the row.
  const t3 z = random_tensor3<double>(4, 5, 1, 7) * 3.0;
  const std::vector<std::size_t> labels{4, nn::ignore_label, 0, 2};
  t3 kept(3, 5, 1);
  for (std::size_t j = 0; j < 5; ++j) {
    kept(0, j, 0) = z(0, j, 0);
    kept(1, j, 0) = z(2, j, 0);
    kept(2, j, 0) = z(3, j, 0);
  }
  const auto r = nn::softmax_cross_entropy(z, labels);
  const auto ref = nn::softmax_cross_entropy(kept, {4, 0, 2});
  CHECK(r.counted == 3);
  CHECK(ref.counted == 3);
  CHECK(r.loss == doctest::Approx(ref.loss).epsilon(1e-15));
  for (std::size_t j = 0; j < 5; ++j) {
    CHECK(r.d_logits(1, j, 0) == 0.0);
    CHECK(r.d_logits(0, j, 0) == doctest::Approx(ref.d_logits(0, j, 0)).epsilon(1e-15));
    CHECK(r.d_logits(3, j, 0) == doctest::Approx(ref.d_logits(2, j, 0)).epsilon(1e-15));
  }
  CHECK(r.predicted.size() == 4);  // every row still gets its argmax
  CHECK_THROWS_WITH_AS(nn::softmax_cross_entropy(kept, {nn::ignore_label, nn::ignore_label, nn::ignore_label}),
                       doctest::Contains("every one of the 3 labels is ignore_label"), tprod::shape_error);
}

TEST_CASE("AdamW: decoupled weight decay and bias-corrected moments, step by step") {
  nn::layer_norm_params<double> prm = nn::make_layer_norm_params<double>(2, 1);
  prm.gamma(0, 0, 0) = 0.5;
  auto grads = nn::zeros_like(prm);
  grads.gamma(0, 0, 0) = 0.2;
  grads.gamma(0, 1, 0) = -3.0;
  grads.beta(0, 1, 0) = 1e-3;
  nn::parameter_refs<double> p, g;
  nn::collect(prm, p, "ln.");
  nn::collect(grads, g, "ln.");
  CHECK(p.names[0] == "ln.gamma");
  CHECK(p.count() == 4);
  const nn::adamw_config cfg{0.1, 0.9, 0.999, 1e-8, 0.01};
  nn::adamw<double> opt(cfg);
  opt.step(p, g);
  // first step: m̂ = g, v̂ = g², so θ ← θ(1 − ηλ) − η·g/(|g| + ε)
  CHECK(prm.gamma(0, 0, 0) == doctest::Approx(0.5 * (1 - 0.1 * 0.01) - 0.1 * 0.2 / (0.2 + 1e-8)));
  CHECK(prm.gamma(0, 1, 0) == doctest::Approx(1.0 * (1 - 0.001) + 0.1 * 3.0 / (3.0 + 1e-8)));
  CHECK(prm.beta(0, 0, 0) == 0.0);  // zero gradient, zero weight
  // second step with the same gradient: m = g(0.9·0.1 + 0.1), m̂ = m/(1 − 0.81) = g, v̂ = g² likewise
  const double before = prm.gamma(0, 0, 0);
  opt.step(p, g, 0.05);
  CHECK(prm.gamma(0, 0, 0) == doctest::Approx(before * (1 - 0.05 * 0.01) - 0.05 * 0.2 / (0.2 + 1e-8)));
  CHECK(opt.steps() == 2);
  nn::parameter_refs<double> short_list;
  CHECK_THROWS_AS(opt.step(short_list, g), tprod::shape_error);
}

TEST_CASE("gradient-norm clipping") {
  auto grads = nn::make_layer_norm_params<double>(3, 1);
  grads.gamma.elements() << 3, 0, 0;
  grads.beta.elements() << 0, 4, 0;
  nn::parameter_refs<double> g;
  nn::collect(grads, g);
  CHECK(nn::clip_grad_norm(g, 1.0) == doctest::Approx(5.0));
  CHECK(nn::grad_norm(g) == doctest::Approx(1.0));
  CHECK(grads.gamma(0, 0, 0) == doctest::Approx(0.6));
  CHECK(nn::clip_grad_norm(g, 10.0) == doctest::Approx(1.0));  // below the limit: unchanged
  CHECK(grads.beta(0, 1, 0) == doctest::Approx(0.8));
  CHECK_THROWS_AS(nn::clip_grad_norm(g, 0.0), tprod::shape_error);
}

TEST_CASE("one-cycle and cosine schedules (paper 000, Table 5)") {
  const nn::one_cycle oc{3e-4, 101, 0.1, 25, 1e-5};  // 10 warm-up steps, annealing over steps 10…100
  CHECK(oc(0) == doctest::Approx(3e-4 / 25));
  CHECK(oc(5) == doctest::Approx(3e-4 / 25 + (3e-4 - 3e-4 / 25) * 0.5));
  CHECK(oc(10) == doctest::Approx(3e-4));
  CHECK(oc(55) == doctest::Approx(1e-5 + (3e-4 - 1e-5) * 0.5));
  CHECK(oc(100) == doctest::Approx(1e-5));
  for (std::size_t s = 10; s < 100; ++s) CHECK(oc(s + 1) <= oc(s));
  const nn::cosine_schedule cs{1.0, 11, 0, 0.0};
  CHECK(cs(0) == doctest::Approx(1.0));
  CHECK(cs(5) == doctest::Approx(0.5));
  CHECK(cs(10) == doctest::Approx(0.0));
  const nn::cosine_schedule warm{2.0, 21, 4, 0.0};
  CHECK(warm(2) == doctest::Approx(1.0));
  CHECK(warm(4) == doctest::Approx(2.0));
  CHECK_THROWS_AS((nn::cosine_schedule{1.0, 5, 5, 0.0}(0)), tprod::shape_error);
  CHECK_THROWS_AS((nn::one_cycle{1.0, 0}(0)), tprod::shape_error);
}

TEST_CASE("parameter counts: paper 000's d = 768 encoders and paper 001's eq. 6.7–6.8") {
  // paper 000, §6.5: 4-layer encoders at d = 768, H = 8, d_ff = 3072
  const auto std768 = nn::paper000_config(768, 8, 3072, 1), t4 = nn::paper000_config(768, 8, 3072, 4);
  CHECK(nn::encoder_param_count(std768, 4) == 28351488);
  CHECK(nn::encoder_param_count(t4, 4) == 7117824);
  CHECK(t4.width == 192);
  CHECK(t4.heads == 2);
  CHECK(t4.hidden == 768);
  // the formula counts what the layer actually holds (one p = 4 layer enumerated tensor by tensor)
  auto layer = nn::make_encoder_params<float>(t4, tprod::dct{}, 1);
  CHECK(nn::count_parameters<float>(layer) * 4 == 7117824);
  // paper 001: TCP-ViT layer (no biases) against eq. 6.7, and the standard layer of width dC against eq. 6.8
  const std::size_t d = 16, c = 3, r = 4;
  auto tcp = nn::make_encoder_params<double>(nn::paper001_config(d, c, 2, r), tprod::dct{}, 2);
  CHECK(nn::count_parameters<double>(tcp) == nn::tcp_vit_layer_param_formula(d, c, r));
  CHECK(nn::count_parameters<double>(tcp) == (4 + 2 * r) * d * d * c + 4 * d * c);
  nn::layer_config vit = nn::paper001_config(d * c, 1, 2, r);
  vit.norm = nn::layer_norm_kind::original_domain;
  auto stdvit = nn::make_encoder_params<double>(vit, tprod::identity_transform{}, 3);
  CHECK(nn::count_parameters<double>(stdvit) == nn::std_vit_layer_param_formula(d, c, r));
  CHECK(nn::decoder_layer_param_count(std768).total() ==
        nn::encoder_layer_param_count(std768).total() + nn::attention_param_count(std768) + 2 * 768);
}
