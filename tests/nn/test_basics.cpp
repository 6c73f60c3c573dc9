// SPDX-License-Identifier: Apache-2.0
// Ten_p/Mat_p, patchify (paper 001 eq. 5.7), L-linear (Prop. 22), activations, tensor LayerNorm, positional encodings.
#include <doctest/doctest.h>

#include <numbers>

#include "nn_test_util.hpp"
#include "tprod/nn/activation.hpp"
#include "tprod/nn/layer_norm.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/patchify.hpp"
#include "tprod/nn/positional.hpp"
#include "tprod/nn/tensorize.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

TEST_CASE("Ten_p / Mat_p fold the feature dimension, pad when p does not divide d, and are adjoint") {
  const dmat x = dmat::Random(5, 10);
  SUBCASE("p divides d") {
    const t3 t = nn::ten_p(x, 2);
    CHECK(t.n() == 5);
    for (Eigen::Index r = 0; r < 5; ++r)
      for (Eigen::Index c = 0; c < 10; ++c) CHECK(t(std::size_t(r), std::size_t(c % 5), std::size_t(c / 5)) == x(r, c));
    CHECK(nn::mat_p(t, 10) == x);
  }
  SUBCASE("padding: d = 10, p = 4 gives d_s = 3 with two zero columns") {
    const t3 t = nn::ten_p(x, 4);
    CHECK(t.n() == 3);
    CHECK(t.p() == 4);
    for (std::size_t r = 0; r < 5; ++r) {
      CHECK(t(r, 1, 3) == 0.0);
      CHECK(t(r, 2, 3) == 0.0);
      CHECK(t(r, 0, 3) == x(Eigen::Index(r), 9));
    }
    CHECK(nn::mat_p(t, 10) == x);
    // ⟨Ten_p X, Y⟩ = ⟨X, Mat_p Y⟩
    const t3 y = random_tensor3<double>(5, 3, 4, 3);
    const dmat my = nn::ten_p_backward(y, 10);
    CHECK(dot(t, y) == doctest::Approx((x.array() * my.array()).sum()).epsilon(1e-14));
    CHECK(nn::mat_p_backward(my, 4).n() == 3);
  }
  SUBCASE("slices side by side is Mat_p without padding") {
    const t3 t = nn::ten_p(x, 2);
    const t3 flat = nn::slices_side_by_side(t);
    CHECK(flat.n() == 10);
    CHECK(nn::mat_p(nn::slices_stacked(flat, 2), 10) == x);
  }
  CHECK_THROWS_AS(nn::mat_p(nn::ten_p(x, 4), 8), tprod::shape_error);   // ⌈8/4⌉ = 2 ≠ 3
  CHECK_THROWS_AS(nn::ten_p(x, 0), tprod::shape_error);
  CHECK_THROWS_AS(nn::slices_stacked(nn::ten_p(x, 2), 3), tprod::shape_error);
}

namespace {
template <class L>
void check_linear_against_naive(const L& l, std::size_t p) {
  auto prm = nn::make_linear_params<double>(4, 3, p, l, 11);
  const t3 x = random_tensor3<double>(5, 4, p, 12);
  const auto [y, saved] = nn::linear_forward(prm, x);
  const dmat z = z_of(l, p);
  // Original-domain W = L⁻¹(Ŵ), B likewise: the layer must equal X *_L W + B computed with plain loops.
  const t3 w = mode3(prm.weight.data(), z.inverse()), b = mode3(prm.bias.data(), z.inverse());
  t3 ref = l_product(x, w, z);
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 3; ++j) ref(i, j, k) += b(0, j, k);
  CHECK(max_diff(y, ref) < 1e-13);

  diff_map f;
  t3 xv = x;
  f.vars = {&xv, &prm.weight.data(), &prm.bias.data()};
  f.names = {"x", "weight", "bias"};
  f.forward = [&] { return nn::linear_forward(prm, xv).first; };
  f.backward = [&](const t3& w_out) {
    const auto s = nn::linear_forward(prm, xv).second;
    auto g = nn::linear_backward(prm, s, w_out);
    return std::vector<t3>{g.d_input, g.d_params.weight.data(), g.d_params.bias.data()};
  };
  check_gradients(f, 21);
}
}  // namespace

TEST_CASE("patchify: a 4x6 image's 2x2 patches by hand, channels as slices, and a batch in row blocks") {
  // Pixel (r, c) of channel k holds 100·k + 10·r + c.
  t3 image(4, 6, 2);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t c = 0; c < 6; ++c) image(r, c, k) = double(100 * k + 10 * r + c);
  const t3 x = nn::patchify(image, 2);
  CHECK(x.shape() == "6x4x2");  // N = 2·3 patches, d = 4 positions, C = 2
  // Patch 4 is grid row 1, column 1: pixels (2, 2), (2, 3), (3, 2), (3, 3), position by position.
  const double patch4[4] = {22, 23, 32, 33};
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(x(4, j, 0) == patch4[j]);
    CHECK(x(4, j, 1) == 100 + patch4[j]);
  }
  CHECK(x(2, 3, 0) == 15);  // patch 2 (row 0, column 2), position 3: pixel (1, 5)
  t3 other = image;
  other *= 2.0;
  const t3 batch = nn::patchify(std::vector<t3>{image, other}, 2);
  CHECK(batch.shape() == "12x4x2");
  CHECK(batch(6 + 4, 1, 1) == 2 * x(4, 1, 1));
  CHECK(batch(4, 1, 1) == x(4, 1, 1));
  CHECK_THROWS_WITH_AS(nn::patchify(image, 4), doctest::Contains("4x6 image does not split into 4x4"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::patchify(std::vector<t3>{image, t3(4, 4, 2)}, 2), doctest::Contains("image 1 is 4x4x2"),
                       tprod::shape_error);
  CHECK_THROWS_AS(nn::patchify(std::vector<t3>{}, 2), tprod::shape_error);
}

TEST_CASE("space_to_depth then patchify: Fashion-MNIST's phases as channels, pixel by pixel") {
  // The TCP-ViT example's layout: phase k = 2a + b of a 28×28 image holds the pixels (2r + a, 2c + b); token t is
  // patch (t / 7, t % 7) of 2×2 in the 14×14 phases, position j = 2u + v its phase pixel (2·(t / 7) + u, 2·(t % 7) + v).
  t3 image(28, 28, 1);
  for (std::size_t r = 0; r < 28; ++r)
    for (std::size_t c = 0; c < 28; ++c) image(r, c, 0) = double(r * 28 + c);
  const t3 phases = nn::space_to_depth(image, 2);
  CHECK(phases.shape() == "14x14x4");
  const t3 x = nn::patchify(phases, 2);
  CHECK(x.shape() == "49x4x4");
  for (std::size_t t = 0; t < 49; ++t)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t row = 2 * (2 * (t / 7) + j / 2) + k / 2, col = 2 * (2 * (t % 7) + j % 2) + k % 2;
        CHECK(x(t, j, k) == double(row * 28 + col));
      }
  // Channels stay apart: channel k of the input fills phases 4k … 4k + 3.
  t3 two(4, 4, 2);
  two(3, 1, 1) = 7;
  const t3 d = nn::space_to_depth(two, 2);
  CHECK(d(1, 0, 4 + 1 * 2 + 1) == 7);
  CHECK_THROWS_WITH_AS(nn::space_to_depth(two, 3), doctest::Contains("factor 3 must divide"), tprod::shape_error);
}

TEST_CASE("L-linear equals X *_L W + B by plain loops, and its gradients pass finite differences") {
  SUBCASE("dct") { check_linear_against_naive(tprod::dct{}, 3); }
  SUBCASE("identity, p = 1 (the standard linear layer)") { check_linear_against_naive(tprod::identity_transform{}, 1); }
  SUBCASE("non-orthogonal matrix transform") { check_linear_against_naive(random_transform(3, 5), 3); }
}

TEST_CASE("original_domain_gradient: dW = dŴ ×₃ Zᵀ under a non-orthogonal Z, by finite differences in W") {
  const auto l = random_transform(3, 9);
  const std::size_t p = 3;
  auto prm = nn::make_linear_params<double>(3, 2, p, l, 5, false);
  const t3 x = random_tensor3<double>(4, 3, p, 6), w_out = random_tensor3<double>(4, 2, p, 7);
  const auto saved = nn::linear_forward(prm, x).second;
  const t3 dw = nn::original_domain_gradient(nn::linear_backward(prm, saved, w_out).d_params.weight);
  // J(W) = ⟨w_out, X *_L W⟩ with Ŵ = L(W): perturb the original-domain W and map it through L.
  const dmat z = z_of(l, p);
  const t3 w0 = mode3(prm.weight.data(), z.inverse());
  const t3 v = random_tensor3<double>(3, 2, p, 8);
  const auto objective = [&](const t3& w) {
    prm.weight.data() = mode3(w, z);
    return dot(w_out, nn::linear_forward(prm, x).first);
  };
  const double h = 1e-5, fd = (objective(w0 + h * v) - objective(w0 - h * v)) / (2 * h);
  CHECK(fd == doctest::Approx(dot(v, dw)).epsilon(1e-8));
  // and it differs from L⁻¹(dŴ), which is right only for an orthogonal Z
  prm.weight.data() = mode3(w0, z);
  const t3 d_hat = nn::linear_backward(prm, saved, w_out).d_params.weight.data();
  CHECK(max_diff(mode3(d_hat, z.inverse()), dw) > 1e-3);
}

TEST_CASE("Prop. 22: with the DCT, dX = G *_L Wᵀ and the original-domain dW = Xᵀ *_L G") {
  const tprod::dct l;
  const std::size_t p = 4;
  auto prm = nn::make_linear_params<double>(3, 5, p, l, 2, false);
  const t3 x = random_tensor3<double>(6, 3, p, 3), g = random_tensor3<double>(6, 5, p, 4);
  const auto saved = nn::linear_forward(prm, x).second;
  const auto grads = nn::linear_backward(prm, saved, g);
  const dmat z = z_of(l, p);
  const t3 w = mode3(prm.weight.data(), z.inverse());
  CHECK(max_diff(grads.d_input, l_product(g, w, z, false, true)) < 1e-13);
  // gradient with respect to the original-domain W: the adjoint of W ↦ L(W) applied to dŴ, i.e. dŴ ×₃ Zᵀ
  CHECK(max_diff(mode3(grads.d_params.weight.data(), z.transpose()), l_product(x, g, z, true, false)) < 1e-13);
  CHECK(max_diff(nn::original_domain_gradient(grads.d_params.weight), l_product(x, g, z, true, false)) < 1e-13);
  // The map X ↦ X *_L W is linear: ⟨X *_L W, G⟩ = ⟨X, dX⟩ exactly (to rounding).
  CHECK(dot(nn::linear_forward(prm, x).first, g) == doctest::Approx(dot(x, grads.d_input)).epsilon(1e-13));
}

TEST_CASE("L-linear in float agrees with double, and rejects mismatched inputs") {
  auto pd = nn::make_linear_params<double>(4, 6, 2, tprod::dct{}, 1);
  auto pf = nn::make_linear_params<float>(4, 6, 2, tprod::dct{}, 1);
  pf.weight.data() = to_float(pd.weight.data());
  pf.bias.data() = to_float(pd.bias.data());
  const t3 x = random_tensor3<double>(7, 4, 2, 9);
  const auto yd = nn::linear_forward(pd, x).first;
  const auto yf = nn::linear_forward(pf, to_float(x)).first;
  CHECK(max_diff(to_double(yf), yd) < 50 * std::numeric_limits<float>::epsilon() * 4);
  CHECK_THROWS_AS(nn::linear_forward(pd, random_tensor3<double>(7, 5, 2, 1)), tprod::shape_error);
  CHECK_THROWS_AS(nn::linear_forward(pd, random_tensor3<double>(7, 4, 3, 1)), tprod::shape_error);
  CHECK_THROWS_AS(nn::make_linear_params<double>(0, 6, 2, tprod::dct{}, 1), tprod::shape_error);
  CHECK_THROWS_AS(nn::make_linear_params<double>(4, 6, 2, random_transform(3, 1), 1), tprod::shape_error);
}

TEST_CASE("activations: known values and derivatives against finite differences") {
  t3 x(1, 5, 1);
  const double pts[] = {-2.0, -1.0, 0.3, 1.0, 2.5};
  for (std::size_t i = 0; i < 5; ++i) x(0, i, 0) = pts[i];
  t3 y;
  nn::activation_forward(nn::activation::gelu, x, y);
  CHECK(y(0, 3, 0) == doctest::Approx(0.8413447460685429).epsilon(1e-14));   // Φ(1)
  CHECK(y(0, 1, 0) == doctest::Approx(-0.15865525393145707).epsilon(1e-13));  // −(1 − Φ(1))
  nn::activation_forward(nn::activation::relu, x, y);
  CHECK(y(0, 0, 0) == 0.0);
  CHECK(y(0, 4, 0) == 2.5);
  nn::activation_forward(nn::activation::gelu_tanh, x, y);
  CHECK(y(0, 3, 0) == doctest::Approx(0.8411919906082768).epsilon(1e-13));
  nn::activation_forward(nn::activation::tanh, x, y);
  CHECK(y(0, 3, 0) == doctest::Approx(0.7615941559557649).epsilon(1e-14));  // tanh(1)
  CHECK(y(0, 0, 0) == doctest::Approx(-0.9640275800758169).epsilon(1e-14));  // tanh(−2)
  for (auto a : {nn::activation::relu, nn::activation::gelu, nn::activation::gelu_tanh, nn::activation::tanh}) {
    CAPTURE(nn::name(a));
    t3 xv = x;
    diff_map f;
    f.vars = {&xv};
    f.names = {"x"};
    f.forward = [&] { t3 o; nn::activation_forward(a, xv, o); return o; };
    f.backward = [&](const t3& w) { t3 d; nn::activation_backward(a, xv, w, d); return std::vector<t3>{d}; };
    check_gradients(f, 3, 1e-6, 5);
    // the fused form used by the FFN: σ(x) and σ'(x) in one pass (σ' checked against the backward pass above)
    t3 big = random_tensor3<double>(3, 700, 1, 4) * 3.0, deriv = big, out, ones(3, 700, 1), ref_d, ref_y;
    ones.elements().setOnes();
    nn::activation_forward_keep_derivative(a, deriv, out);
    nn::activation_forward(a, big, ref_y);
    nn::activation_backward(a, big, ones, ref_d);
    CHECK(max_diff(out, ref_y) < 1e-15);
    CHECK(max_diff(deriv, ref_d) < 1e-15);
  }
}

TEST_CASE("tensor LayerNorm: statistics per (token, slice), both kinds, gradients") {
  const std::size_t r = 4, n = 6, p = 3;
  const t3 x = random_tensor3<double>(r, n, p, 5) * 3.0;
  for (auto kind : {nn::layer_norm_kind::original_domain, nn::layer_norm_kind::transform_domain}) {
    CAPTURE(int(kind));
    auto prm = nn::make_layer_norm_params<double>(n, p, kind, 1e-3);
    const auto [y, saved] = nn::layer_norm_forward(prm, x);
    const bool std_plus_eps = kind == nn::layer_norm_kind::transform_domain;
    for (std::size_t k = 0; k < p; ++k) {
      // with Γ = 1, ℬ = 0 each row of each slice has mean 0 and standard deviation σ/s
      const dmat xs = slice(x, k), ys = slice(y, k);
      for (Eigen::Index i = 0; i < xs.rows(); ++i) {
        const double mu = xs.row(i).mean(), sig = std::sqrt((xs.row(i).array() - mu).square().mean());
        const double s = std_plus_eps ? sig + 1e-3 : std::sqrt(sig * sig + 1e-3);
        CHECK(std::abs(ys.row(i).mean()) < 1e-14);
        CHECK(std::sqrt(ys.row(i).array().square().mean()) == doctest::Approx(sig / s).epsilon(1e-12));
      }
    }
    prm.gamma = random_tensor3<double>(1, n, p, 8);
    prm.beta = random_tensor3<double>(1, n, p, 9);
    const auto y2 = nn::layer_norm_forward(prm, x).first;
    for (std::size_t k = 0; k < p; ++k)
      CHECK((slice(y2, k) - naive_layer_norm(slice(x, k), slice(prm.gamma, k), slice(prm.beta, k), 1e-3, std_plus_eps))
                .cwiseAbs()
                .maxCoeff() < 1e-13);
    t3 xv = x;
    diff_map f;
    f.vars = {&xv, &prm.gamma, &prm.beta};
    f.names = {"x", "gamma", "beta"};
    f.forward = [&] { return nn::layer_norm_forward(prm, xv).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::layer_norm_backward(prm, nn::layer_norm_forward(prm, xv).second, w);
      return std::vector<t3>{g.d_input, g.d_params.gamma, g.d_params.beta};
    };
    check_gradients(f, 13);
  }
  CHECK_THROWS_AS(nn::layer_norm_forward(nn::make_layer_norm_params<double>(5, p), x), tprod::shape_error);
  CHECK_THROWS_AS(nn::make_layer_norm_params<double>(5, p, nn::layer_norm_kind::original_domain, -1.0),
                  tprod::shape_error);
}

TEST_CASE("LayerNorm in float matches double") {
  const t3 x = random_tensor3<double>(5, 8, 2, 1);
  const auto pd = nn::make_layer_norm_params<double>(8, 2);
  const auto pf = nn::make_layer_norm_params<float>(8, 2);
  CHECK(max_diff(to_double(nn::layer_norm_forward(pf, to_float(x)).first), nn::layer_norm_forward(pd, x).first) <
        100 * std::numeric_limits<float>::epsilon());
}

TEST_CASE("positional encoding: α strategies (Remark 4) and Def. 13 values") {
  using nn::alpha_strategy;
  const auto lin = nn::alphas(alpha_strategy::linear, 4), ex = nn::alphas(alpha_strategy::exponential, 4),
             har = nn::alphas(alpha_strategy::harmonic, 4), st = nn::alphas(alpha_strategy::standard, 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(lin[k] == doctest::Approx(double(k + 1) / 4));
    CHECK(ex[k] == doctest::Approx(std::pow(2.0, double(k) / 3)));
    CHECK(har[k] == double(k + 1));
    CHECK(st[k] == 1.0);
  }
  CHECK(ex[3] == doctest::Approx(2.0));
  CHECK(nn::alphas(alpha_strategy::exponential, 1)[0] == 1.0);
  CHECK_THROWS_AS(nn::alphas(alpha_strategy::linear, 0), tprod::shape_error);

  // Def. 13 at t = 1 (the first position), 1-based j = 1 (sin) and j = 2 (cos) share ω = 1.
  const auto pe = nn::positional_encoding<double>(3, 6, lin);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(pe(0, 0, k) == doctest::Approx(std::sin(lin[k])));
    CHECK(pe(0, 1, k) == doctest::Approx(std::cos(lin[k])));
    CHECK(pe(2, 4, k) == doctest::Approx(std::sin(3 * lin[k] / std::pow(10000.0, 4.0 / 6))));
    CHECK(pe(1, 5, k) == doctest::Approx(std::cos(2 * lin[k] / std::pow(10000.0, 4.0 / 6))));
  }
  // Remark 5: p = 1, α = 1, 0-based positions give the classic table PE(pos, 2i) = sin(pos/10000^(2i/d)).
  const auto classic = nn::positional_encoding<double>(5, 8, {1.0}, 0);
  for (std::size_t pos = 0; pos < 5; ++pos)
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(classic(pos, 2 * i, 0) == doctest::Approx(std::sin(double(pos) / std::pow(10000.0, 2.0 * i / 8))));
      CHECK(classic(pos, 2 * i + 1, 0) == doctest::Approx(std::cos(double(pos) / std::pow(10000.0, 2.0 * i / 8))));
    }
}

TEST_CASE("positional layers: added to every sequence; learnable α and learned table gradients") {
  const std::size_t batch = 2, len = 3, ds = 4, p = 3;
  t3 x = random_tensor3<double>(batch * len, ds, p, 4);
  auto prm = nn::make_sinusoidal_positional<double>(p, nn::alpha_strategy::harmonic, true);
  const t3 y = nn::positional_forward(prm, x, batch);
  const auto pe = nn::positional_encoding<double>(len, ds, nn::alphas(nn::alpha_strategy::harmonic, p));
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t t = 0; t < len; ++t) CHECK(y(b * len + t, 3, 2) == doctest::Approx(x(b * len + t, 3, 2) + pe(t, 3, 2)));
  {
    diff_map f;
    f.vars = {&x, &prm.alpha};
    f.names = {"x", "alpha"};
    f.forward = [&] { return nn::positional_forward(prm, x, batch); };
    f.backward = [&](const t3& w) { return std::vector<t3>{w, nn::positional_backward(prm, w, batch).alpha}; };
    check_gradients(f, 5);
  }
  auto learned = nn::make_learned_positional<double>(len, ds, p, 3);
  {
    diff_map f;
    f.vars = {&learned.table};
    f.names = {"table"};
    f.forward = [&] { return nn::positional_forward(learned, x, batch); };
    f.backward = [&](const t3& w) { return std::vector<t3>{nn::positional_backward(learned, w, batch).table}; };
    check_gradients(f, 6);
  }
  {  // a table longer than the sequences (GPT-2's holds 1024 positions): its first T rows, gradient 0 beyond them
    auto longer = nn::make_learned_positional<double>(len + 3, ds, p, 4);
    const t3 y_long = nn::positional_forward(longer, x, batch);
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t t = 0; t < len; ++t)
        CHECK(y_long(b * len + t, 1, p - 1) == x(b * len + t, 1, p - 1) + longer.table(t, 1, p - 1));
    const t3 g = nn::positional_backward(longer, x, batch).table;
    REQUIRE(g.m() == len + 3);
    CHECK(g(len, 0, 0) == 0.0);
    CHECK(g(len + 2, ds - 1, p - 1) == 0.0);
    diff_map f;
    f.vars = {&longer.table};
    f.names = {"table"};
    f.forward = [&] { return nn::positional_forward(longer, x, batch); };
    f.backward = [&](const t3& w) { return std::vector<t3>{nn::positional_backward(longer, w, batch).table}; };
    check_gradients(f, 7);
  }
  auto fixed = nn::make_sinusoidal_positional<double>(p, nn::alpha_strategy::linear);
  std::size_t visited = 0;
  fixed.for_each([&](std::string_view, t3&) { ++visited; });
  CHECK(visited == 0);  // a fixed strategy has nothing to train
  CHECK_THROWS_AS(nn::positional_forward(prm, x, 4), tprod::shape_error);
  CHECK_THROWS_AS(nn::positional_forward(learned, random_tensor3<double>(8, ds, p, 1), 2), tprod::shape_error);
}
