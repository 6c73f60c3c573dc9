// SPDX-License-Identifier: Apache-2.0
// The learned transform (nn/learned_transform.hpp): Z = Q(S)·Z₀ stays orthogonal and starts at the DCT, and the
// gradient with respect to S that the layers' backward passes accumulate equals central finite differences of
// the forward pass, in double, through an L-linear layer, the encoder layer with either LayerNorm domain and
// attention variant, and a two-layer encoder_stack of the composition API.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "nn_test_util.hpp"
#include "tprod/algebra/product.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/learned_transform.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/model/attention_layer.hpp"
#include "tprod/nn/model/decoder_stack.hpp"
#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/norm_layer.hpp"
#include "tprod/nn/model/sequential.hpp"
#include "tprod/transform/dct.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;
using learned = nn::learned_transform<double>;

namespace {

/// A transform away from Z₀ (S random), so that the Cayley map's derivative is exercised away from S = 0.
learned moved_transform(std::size_t p, std::uint64_t seed) {
  learned l(p);
  l.skew() = 0.4 * random_tensor3<double>(p, p, 1, seed);
  return l;
}

/// ∂ℓ/∂S by central differences of `loss` (which runs a forward pass from the current S).
Eigen::MatrixXd finite_difference(const learned& l, const std::function<double()>& loss) {
  const double h = 1e-5;
  const auto p = Eigen::Index(l.size());
  Eigen::MatrixXd d(p, p);
  for (Eigen::Index i = 0; i < p; ++i)
    for (Eigen::Index j = 0; j < p; ++j) {
      double& s = l.skew().slice(0)(i, j);
      const double s0 = s;
      s = s0 + h;
      const double up = loss();
      s = s0 - h;
      const double down = loss();
      s = s0;
      d(i, j) = (up - down) / (2 * h);
    }
  return d;
}

void check_close(const Eigen::MatrixXd& analytic, const Eigen::MatrixXd& numeric) {
  CAPTURE(analytic);
  CAPTURE(numeric);
  CHECK(numeric.norm() > 1e-3);  // the loss does depend on Z
  CHECK((analytic - numeric).norm() <= 1e-6 * (1 + numeric.norm()));
}

Eigen::MatrixXd gradient_of(const learned& l) { return l.skew_grad().slice(0); }

void check_encoder(const nn::layer_config& cfg) {
  CAPTURE(int(cfg.norm));
  CAPTURE(int(cfg.attention));
  const learned l = moved_transform(cfg.slices, 3);
  const auto prm = nn::make_encoder_params<double>(cfg, l, 11);
  const std::size_t batch = 2, len = 3;
  const t3 x = random_tensor3<double>(batch * len, cfg.width, cfg.slices, 12);
  const t3 w = random_tensor3<double>(batch * len, cfg.width, cfg.slices, 13);
  const nn::attention_mask mask{false, {3, 2}};
  l.begin_pass(true);
  const auto [y, saved] = nn::encoder_layer_forward(prm, x, batch, mask);
  l.skew_grad().elements().setZero();
  (void)nn::encoder_layer_backward(prm, saved, w);
  l.end_backward();
  const Eigen::MatrixXd analytic = gradient_of(l);
  l.begin_pass(false);
  check_close(analytic, finite_difference(l, [&] { return dot(w, nn::encoder_layer_forward(prm, x, batch, mask).first); }));
}

nn::layer_config small_config(nn::layer_norm_kind norm, nn::norm_placement place, nn::attention_variant att) {
  nn::layer_config c;
  c.width = 4;
  c.slices = 3;
  c.heads = 2;
  c.hidden = 6;
  c.act = nn::activation::gelu;
  c.norm = norm;
  c.placement = place;
  c.attention = att;
  c.eps = 1e-3;
  return c;
}

}  // namespace

TEST_CASE("learned_transform: Z = Q(S)·Z0 starts at the DCT, stays orthogonal, follows S") {
  const learned l(5);
  const Eigen::MatrixXd dct = tprod::dct{}.forward_factor<double>(5)->transpose();
  CHECK((l.matrix() - dct).cwiseAbs().maxCoeff() == 0.0);
  l.skew() = 3.0 * random_tensor3<double>(5, 5, 1, 1);
  const Eigen::MatrixXd z = l.matrix();
  CHECK((z - dct).norm() > 0.5);
  CHECK((z.transpose() * z - Eigen::MatrixXd::Identity(5, 5)).cwiseAbs().maxCoeff() < 1e-14);
  CHECK((l.inverse_matrix() - z.transpose()).cwiseAbs().maxCoeff() < 1e-14);
  const learned copy = l;  // a handle: one Z
  copy.skew().elements().setZero();
  CHECK((l.matrix() - dct).cwiseAbs().maxCoeff() == 0.0);
  CHECK(copy == l);
  CHECK_FALSE(learned(5) == l);
  CHECK_THROWS_WITH_AS(learned(Eigen::MatrixXd::Ones(3, 3)), doctest::Contains("orthogonal"), tprod::numerical_error);
}

TEST_CASE("learned_transform: the gradient through an L-linear layer matches finite differences") {
  const learned l = moved_transform(4, 2);
  const auto prm = nn::make_linear_params<double>(3, 5, 4, l, 7);
  const t3 x = random_tensor3<double>(6, 3, 4, 8), w = random_tensor3<double>(6, 5, 4, 9);
  l.begin_pass(true);
  const auto [y, saved] = nn::linear_forward(prm, x);
  (void)nn::linear_backward(prm, saved, w);
  l.end_backward();
  const Eigen::MatrixXd analytic = gradient_of(l);
  l.begin_pass(false);
  check_close(analytic, finite_difference(l, [&] { return dot(w, nn::linear_forward(prm, x).first); }));
}

TEST_CASE("learned_transform: the gradient through the encoder layer matches finite differences") {
  using nn::attention_variant, nn::layer_norm_kind, nn::norm_placement;
  check_encoder(small_config(layer_norm_kind::original_domain, norm_placement::post, attention_variant::spectral));
  check_encoder(small_config(layer_norm_kind::original_domain, norm_placement::pre, attention_variant::t_softmax));
  check_encoder(small_config(layer_norm_kind::transform_domain, norm_placement::pre, attention_variant::t_softmax));
}

TEST_CASE("learned_transform: an encoder_stack trains S as its parameter `encoder.transform.skew`") {
  const auto cfg = small_config(nn::layer_norm_kind::original_domain, nn::norm_placement::post,
                                nn::attention_variant::spectral);
  const learned l = moved_transform(cfg.slices, 4);
  nn::encoder_stack<double, learned> stack({nn::make_encoder_params<double>(cfg, l, 1),
                                            nn::make_encoder_params<double>(cfg, l, 2)});
  std::vector<std::string> names;
  stack.for_each_parameter([&](std::string_view name, t3&, t3&) { names.emplace_back(name); });
  CHECK(names.back() == "encoder.transform.skew");

  nn::batch b;
  b.size = 2;
  b.lengths = {3, 1};
  const t3 x = random_tensor3<double>(6, cfg.width, cfg.slices, 5), w = random_tensor3<double>(6, cfg.width, cfg.slices, 6);
  (void)stack.forward(x, b);
  (void)stack.backward(w);
  (void)stack.forward(x, b);  // gradients accumulate over backward passes
  (void)stack.backward(w);
  const Eigen::MatrixXd analytic = gradient_of(l) / 2;
  b.mode = nn::phase::eval;  // no recording
  check_close(analytic, finite_difference(l, [&] { return dot(w, stack.forward(x, b)); }));

  // A backward pass after an evaluation pass has nothing recorded: an error, not a gradient without Z's part.
  CHECK_THROWS_WITH_AS(stack.backward(w), doctest::Contains("not recorded"), tprod::numerical_error);
  learned other(cfg.slices);
  CHECK_THROWS_WITH_AS((nn::encoder_stack<double, learned>({nn::make_encoder_params<double>(cfg, l, 1),
                                                            nn::make_encoder_params<double>(cfg, other, 2)})),
                       doctest::Contains("share"), tprod::shape_error);
}

TEST_CASE("learned_transform: a backward pass that does not mirror the forward pass is refused") {
  const learned l(3);
  const t3 a = random_tensor3<double>(2, 2, 3, 1);
  l.begin_pass(true);
  l.record_pass(false, a.view());
  CHECK_THROWS_WITH_AS(l.backward_pass(true, a.view()), doctest::Contains("last was L on"), tprod::numerical_error);
  CHECK_THROWS_WITH_AS(l.end_backward(), doctest::Contains("1 recorded"), tprod::numerical_error);
  l.backward_pass(false, a.view());
  l.end_backward();
  CHECK_THROWS_WITH_AS(l.backward_pass(false, a.view()), doctest::Contains("did not record"), tprod::numerical_error);
  // Never begun: the layers' functions use Z as a fixed transform.
  const learned fixed(3);
  fixed.backward_pass(false, a.view());
  CHECK(fixed.skew_grad().elements().cwiseAbs().maxCoeff() == 0.0);
}

namespace {

/// Trains an L-linear student 𝒳 *_L 𝒲 + ℬ on a teacher 𝒳 *_{Z*} 𝒲* with a random orthogonal Z* (not the DCT), by
/// AdamW on Ŵ, B̂ (and S when L is learned); returns the final mean squared error.
template <class L>
double fit_teacher(const L& l, bool learn_z) {
  const std::size_t rows = 32, n = 4, q = 4, p = 4;
  std::srand(5);
  const Eigen::MatrixXd z_star = Eigen::MatrixXd::Random(p, p).householderQr().householderQ();
  const t3 x = random_tensor3<double>(rows, n, p, 1);
  const t3 y_star = tprod::product(x, random_tensor3<double>(n, q, p, 2), tprod::matrix_transform<double>(z_star));
  auto prm = nn::make_linear_params<double>(n, q, p, l, 3);
  auto grads = nn::zeros_like(prm);
  nn::parameter_refs<double> values, g;
  nn::collect(prm, values);
  nn::collect(grads, g);
  if constexpr (requires { l.skew(); })
    if (learn_z) {
      values.tensors.push_back(&l.skew());
      values.names.emplace_back("skew");
      g.tensors.push_back(&l.skew_grad());
      g.names.emplace_back("skew");
    }
  nn::adamw<double> opt({.lr = 0.02, .weight_decay = 0});
  double mse = 0;
  for (int step = 0; step < 1500; ++step) {
    if constexpr (requires { l.skew(); }) l.begin_pass(learn_z);
    const auto [y, saved] = nn::linear_forward(prm, x);
    const t3 diff = y - y_star;
    mse = dot(diff, diff) / double(diff.size());
    if constexpr (requires { l.skew(); }) l.skew_grad().elements().setZero();
    auto gr = nn::linear_backward(prm, saved, (2.0 / double(diff.size())) * diff);
    grads = gr.d_params;
    opt.step(values, g);
    if constexpr (requires { l.skew(); }) l.end_backward();
  }
  return mse;
}

}  // namespace

TEST_CASE("learned_transform: learning Z fits a teacher whose transform is not the DCT; the DCT alone cannot") {
  const double with_dct = fit_teacher(tprod::dct{}, false);
  const double learned_z = fit_teacher(learned(4), true);
  CAPTURE(with_dct);
  CAPTURE(learned_z);
  CHECK(with_dct > 0.05);               // the DCT's slices cannot express Z*'s
  CHECK(learned_z < 1e-3 * with_dct);   // a learned Z can
}

namespace {

/// A model M holding a learned transform l in one or more of its layers: S is listed once, as `skew_name`, and one
/// training step (after an evaluation pass, whose unrecorded cycle it must replace) accumulates the gradient of
/// ⟨w, M(x)⟩ with respect to S that central differences of the forward pass give.
template <class M>
void check_trains_z(M& model, const learned& l, const t3& x, const t3& w, nn::batch b, const std::string& skew_name) {
  std::vector<std::string> names;
  std::size_t listed = 0;
  model.for_each_parameter([&](std::string_view name, t3& value, t3&) {
    names.emplace_back(name);
    if (&value == &l.skew()) ++listed;
  });
  CAPTURE(names.size());
  CHECK(listed == 1);
  CHECK(std::find(names.begin(), names.end(), skew_name) != names.end());
  b.mode = nn::phase::eval;
  (void)model.forward(x, b);
  b.mode = nn::phase::train;
  l.skew_grad().elements().setZero();
  (void)model.forward(x, b);
  (void)model.backward(w);
  const Eigen::MatrixXd analytic = gradient_of(l);
  b.mode = nn::phase::eval;
  check_close(analytic, finite_difference(l, [&] { return dot(w, model.forward(x, b)); }));
}

nn::batch batch_of(std::size_t size, std::vector<std::size_t> lengths = {}) {
  nn::batch b;
  b.size = size;
  b.lengths = std::move(lengths);
  return b;
}

}  // namespace

TEST_CASE("learned_transform: every layer that takes a transform trains a learned one, alone or sharing it") {
  const std::size_t p = 3;
  const learned l = moved_transform(p, 21);
  const t3 x = random_tensor3<double>(4, 4, p, 22);

  SUBCASE("linear_layer in a sequential") {
    nn::sequential<double, nn::linear_layer<double, learned>> model(
        nn::linear_layer<double, learned>(nn::make_linear_params<double>(4, 3, p, l, 23), "proj"));
    check_trains_z(model, l, x, random_tensor3<double>(4, 3, p, 24), batch_of(4), "proj.transform.skew");
  }
  SUBCASE("a transform-domain norm_layer and a linear_layer sharing one Z") {
    using norm = nn::norm_layer<double, learned>;
    using linear = nn::linear_layer<double, learned>;
    nn::sequential<double, norm, linear> model(
        norm(nn::make_layer_norm_params<double>(4, p, nn::layer_norm_kind::transform_domain, 1e-3), l, "norm"),
        linear(nn::make_linear_params<double>(4, 2, p, l, 25), "head"));
    check_trains_z(model, l, x, random_tensor3<double>(4, 2, p, 26), batch_of(4), "norm.transform.skew");
  }
  SUBCASE("attention_layer") {
    using attn = nn::attention_layer<double, learned>;
    nn::sequential<double, attn> model(attn(nn::make_attention_params<double>(4, 2, p, l, 27), "attn"));
    check_trains_z(model, l, x, random_tensor3<double>(4, 4, p, 28), batch_of(2, {2, 1}), "attn.transform.skew");
  }
  SUBCASE("a linear_layer before an encoder_stack, one Z") {
    const auto cfg = small_config(nn::layer_norm_kind::original_domain, nn::norm_placement::post,
                                  nn::attention_variant::spectral);
    using linear = nn::linear_layer<double, learned>;
    using encoder = nn::encoder_stack<double, learned>;
    nn::sequential<double, linear, encoder> model(linear(nn::make_linear_params<double>(4, 4, p, l, 29), "in"),
                                                  encoder({nn::make_encoder_params<double>(cfg, l, 30)}));
    check_trains_z(model, l, x, random_tensor3<double>(4, 4, p, 31), batch_of(2), "in.transform.skew");
  }
  SUBCASE("decoder_stack") {
    const auto cfg = small_config(nn::layer_norm_kind::transform_domain, nn::norm_placement::pre,
                                  nn::attention_variant::spectral);
    nn::decoder_stack<double, learned> dec({nn::make_decoder_params<double>(cfg, l, 32)});
    const t3 memory = random_tensor3<double>(6, 4, p, 33);
    dec.set_memory(memory);
    check_trains_z(dec, l, x, random_tensor3<double>(4, 4, p, 34), batch_of(2), "decoder.transform.skew");
    const learned other(p);  // a second Z would run untrained in the second layer: refused
    CHECK_THROWS_WITH_AS((nn::decoder_stack<double, learned>({nn::make_decoder_params<double>(cfg, l, 35),
                                                              nn::make_decoder_params<double>(cfg, other, 36)})),
                         doctest::Contains("share"), tprod::shape_error);
  }
}
