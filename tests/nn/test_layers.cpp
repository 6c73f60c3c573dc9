// SPDX-License-Identifier: Apache-2.0
// L-FFN (Def. 15, Thm. 16), encoder layer (eq. 4–5 and 5.9–5.10) and decoder layer (eq. 6–8).
#include <doctest/doctest.h>

#include "nn_test_util.hpp"
#include "tprod/nn/decoder.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/ffn.hpp"
#include "tprod/nn/t_attention.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

namespace {

/// Variables and gradients of a parameter set, in visiting order.
template <class P>
void append_params(P& params, diff_map& f, const std::string& prefix) {
  params.for_each([&](std::string_view name, t3& t) {
    f.vars.push_back(&t);
    f.names.push_back(prefix + std::string(name));
  });
}
template <class P>
void append_grads(P& grads, std::vector<t3>& out) {
  grads.for_each([&](std::string_view, t3& t) { out.push_back(t); });
}

/// Random LayerNorm parameters so that their gradients are exercised away from Γ = 1, ℬ = 0.
template <class P>
void randomize_norms(P& prm, std::uint64_t seed) {
  prm.ln1.gamma = random_tensor3<double>(1, prm.ln1.width(), prm.ln1.slices(), seed) + 1.5 * t3(prm.ln1.gamma);
  prm.ln1.beta = random_tensor3<double>(1, prm.ln1.width(), prm.ln1.slices(), seed + 1);
  prm.ln2.gamma = random_tensor3<double>(1, prm.ln2.width(), prm.ln2.slices(), seed + 2) + 1.5 * t3(prm.ln2.gamma);
  prm.ln2.beta = random_tensor3<double>(1, prm.ln2.width(), prm.ln2.slices(), seed + 3);
}

nn::layer_config small_config(nn::norm_placement place, nn::layer_norm_kind norm, nn::attention_variant att,
                              nn::activation act, bool bias, std::size_t p) {
  nn::layer_config c;
  c.width = 4;
  c.slices = p;
  c.heads = 2;
  c.hidden = 6;
  c.act = act;
  c.bias = bias;
  c.placement = place;
  c.norm = norm;
  c.attention = att;
  c.eps = 1e-3;
  return c;
}

template <class L>
void check_encoder_gradients(const nn::layer_config& cfg, const L& l, const nn::attention_mask& mask) {
  auto prm = nn::make_encoder_params<double>(cfg, l, 41);
  randomize_norms(prm, 50);
  const std::size_t batch = 2, len = 3;
  t3 x = random_tensor3<double>(batch * len, cfg.width, cfg.slices, 42);
  diff_map f;
  f.vars = {&x};
  f.names = {"x"};
  append_params(prm, f, "");
  f.forward = [&] { return nn::encoder_layer_forward(prm, x, batch, mask).first; };
  f.backward = [&](const t3& w) {
    auto g = nn::encoder_layer_backward(prm, nn::encoder_layer_forward(prm, x, batch, mask).second, w);
    std::vector<t3> r{g.d_input};
    append_grads(g.d_params, r);
    return r;
  };
  check_gradients(f, 43, 1e-6, 2);
}

}  // namespace

TEST_CASE("L-FFN: Thm. 16 slice-wise equivalence, the p = 1 standard FFN, and gradients") {
  for (auto act : {nn::activation::relu, nn::activation::gelu}) {
    const tprod::dct l;
    const std::size_t p = 3;
    auto prm = nn::make_ffn_params<double>(4, 7, p, l, 3, act);
    const t3 x = random_tensor3<double>(5, 4, p, 4);
    const t3 y = nn::ffn_forward(prm, x).first;
    const dmat z = z_of(l, p);
    const t3 xh = mode3(x, z);
    t3 yh(5, 4, p);
    for (std::size_t k = 0; k < p; ++k)
      set_slice(yh, k, naive_ffn(slice(xh, k), slice(prm.w1.data(), k), slice(prm.b1.data(), k), slice(prm.w2.data(), k),
                                 slice(prm.b2.data(), k), act == nn::activation::gelu));
    CHECK(max_diff(y, mode3(yh, z.inverse())) < 1e-13);
  }
  {
    auto prm = nn::make_ffn_params<double>(5, 8, 1, tprod::identity_transform{}, 5, nn::activation::relu, false);
    const t3 x = random_tensor3<double>(4, 5, 1, 6);
    const dmat none(0, 0);
    CHECK((slice(nn::ffn_forward(prm, x).first, 0) -
           naive_ffn(slice(x, 0), slice(prm.w1.data(), 0), none, slice(prm.w2.data(), 0), none, false))
              .cwiseAbs()
              .maxCoeff() < 1e-13);
  }
  for (auto act : {nn::activation::relu, nn::activation::gelu, nn::activation::gelu_tanh}) {
    CAPTURE(nn::name(act));
    const auto l = random_transform(2, 8);
    auto prm = nn::make_ffn_params<double>(3, 5, 2, l, 7, act);
    t3 x = random_tensor3<double>(4, 3, 2, 8);
    diff_map f;
    f.vars = {&x};
    f.names = {"x"};
    append_params(prm, f, "");
    f.forward = [&] { return nn::ffn_forward(prm, x).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::ffn_backward(prm, nn::ffn_forward(prm, x).second, w);
      std::vector<t3> r{g.d_input};
      append_grads(g.d_params, r);
      return r;
    };
    check_gradients(f, 9);
  }
  CHECK_THROWS_AS(nn::ffn_forward(nn::make_ffn_params<double>(4, 7, 2, tprod::dct{}, 1), random_tensor3<double>(3, 5, 2, 1)),
                  tprod::shape_error);
}

TEST_CASE("encoder layer with p = 1 and the identity transform is the standard post-norm encoder layer") {
  auto cfg = nn::paper000_config(6, 2, 10, 1, nn::activation::gelu);
  auto prm = nn::make_encoder_params<double>(cfg, tprod::identity_transform{}, 3);
  randomize_norms(prm, 4);
  const std::size_t batch = 2, len = 4;
  const nn::attention_mask mask{false, {3, 4}};
  const t3 x = random_tensor3<double>(batch * len, 6, 1, 5);
  const t3 y = nn::encoder_layer_forward(prm, x, batch, mask).first;
  auto s = [](const auto& t) { return slice(t.data(), 0); };
  for (std::size_t b = 0; b < batch; ++b) {
    const dmat xb = sequence(x, 0, b, len);
    const dmat a = naive_mha(xb, xb, s(prm.attn.w_qkv), s(prm.attn.b_qkv), s(prm.attn.w_o), s(prm.attn.b_o), 2, false,
                             mask.key_lengths[b]);
    const dmat x1 = naive_layer_norm(xb + a, slice(prm.ln1.gamma, 0), slice(prm.ln1.beta, 0), cfg.eps, false);
    const dmat f = naive_ffn(x1, s(prm.ffn.w1), s(prm.ffn.b1), s(prm.ffn.w2), s(prm.ffn.b2), true);
    const dmat ref = naive_layer_norm(x1 + f, slice(prm.ln2.gamma, 0), slice(prm.ln2.beta, 0), cfg.eps, false);
    CHECK((sequence(y, 0, b, len) - ref).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("with the transform-domain LayerNorm the whole encoder layer is p standard layers on L(X) (eq. 13)") {
  for (auto place : {nn::norm_placement::pre, nn::norm_placement::post}) {
    CAPTURE(int(place));
    const tprod::dct l;
    const std::size_t p = 3, batch = 2, len = 3;
    auto cfg = small_config(place, nn::layer_norm_kind::transform_domain, nn::attention_variant::spectral,
                            nn::activation::gelu, true, p);
    auto prm = nn::make_encoder_params<double>(cfg, l, 6);
    randomize_norms(prm, 7);
    const t3 x = random_tensor3<double>(batch * len, 4, p, 8);
    const t3 y = nn::encoder_layer_forward(prm, x, batch).first;
    const dmat z = z_of(l, p);
    const t3 xh = mode3(x, z);
    t3 yh(batch * len, 4, p);
    for (std::size_t k = 0; k < p; ++k) {
      auto s = [&](const auto& t) { return slice(t.data(), k); };
      auto ln = [&](const dmat& in, const auto& n) { return naive_layer_norm(in, slice(n.gamma, k), slice(n.beta, k), cfg.eps, true); };
      auto mha = [&](const dmat& in) {
        return naive_mha(in, in, s(prm.attn.w_qkv), s(prm.attn.b_qkv), s(prm.attn.w_o), s(prm.attn.b_o), 2, false, len);
      };
      auto ffn = [&](const dmat& in) { return naive_ffn(in, s(prm.ffn.w1), s(prm.ffn.b1), s(prm.ffn.w2), s(prm.ffn.b2), true); };
      for (std::size_t b = 0; b < batch; ++b) {
        const dmat xb = sequence(xh, k, b, len);
        dmat out;
        if (place == nn::norm_placement::pre) {
          const dmat x1 = xb + mha(ln(xb, prm.ln1));
          out = x1 + ffn(ln(x1, prm.ln2));
        } else {
          const dmat x1 = ln(xb + mha(xb), prm.ln1);
          out = ln(x1 + ffn(x1), prm.ln2);
        }
        for (std::size_t t = 0; t < len; ++t)
          for (std::size_t j = 0; j < 4; ++j) yh(b * len + t, j, k) = out(Eigen::Index(t), Eigen::Index(j));
      }
    }
    CHECK(max_diff(y, mode3(yh, z.inverse())) < 1e-12);
  }
}

TEST_CASE("encoder layer gradients (finite differences, adjoint identity) for every form") {
  using P = nn::norm_placement;
  using N = nn::layer_norm_kind;
  using A = nn::attention_variant;
  using F = nn::activation;
  SUBCASE("paper 000: post-norm, original-domain LayerNorm, spectral attention, ReLU, biases") {
    check_encoder_gradients(small_config(P::post, N::original_domain, A::spectral, F::relu, true, 3), tprod::dct{},
                            {false, {2, 3}});
  }
  SUBCASE("paper 001: pre-norm, transform-domain LayerNorm, t-Softmax, GELU, no biases") {
    check_encoder_gradients(small_config(P::pre, N::transform_domain, A::t_softmax, F::gelu, false, 2), tprod::dct{}, {});
  }
  SUBCASE("pre-norm, original-domain LayerNorm, non-orthogonal transform") {
    check_encoder_gradients(small_config(P::pre, N::original_domain, A::spectral, F::gelu_tanh, true, 2),
                            random_transform(2, 3), {true, {}});
  }
  SUBCASE("post-norm, transform-domain LayerNorm, non-orthogonal transform") {
    check_encoder_gradients(small_config(P::post, N::transform_domain, A::spectral, F::gelu, true, 3),
                            random_transform(3, 4), {});
  }
}

TEST_CASE("encoder layer: float matches double; configs and inputs are validated") {
  auto cfg = nn::paper000_config(16, 4, 32, 4, nn::activation::gelu);
  auto pd = nn::make_encoder_params<double>(cfg, tprod::dct{}, 1);
  auto pf = nn::make_encoder_params<float>(cfg, tprod::dct{}, 1);
  std::vector<t3*> dvars;
  pd.for_each([&](std::string_view, t3& t) { dvars.push_back(&t); });
  std::size_t i = 0;
  pf.for_each([&](std::string_view, tensor3<float>& t) { t = to_float(*dvars[i++]); });
  const t3 x = random_tensor3<double>(12, 4, 4, 2);
  CHECK(max_diff(to_double(nn::encoder_layer_forward(pf, to_float(x), 2).first), nn::encoder_layer_forward(pd, x, 2).first) <
        1e-4);
  CHECK_THROWS_AS(nn::paper000_config(16, 4, 32, 3), tprod::shape_error);
  CHECK_THROWS_AS(nn::paper000_config(16, 2, 32, 4), tprod::shape_error);  // H = 2 heads over p = 4 slices
  CHECK_THROWS_AS(nn::encoder_layer_forward(pd, random_tensor3<double>(12, 4, 3, 1), 2), tprod::shape_error);
  CHECK_THROWS_AS(nn::make_encoder_params<double>(cfg, random_transform(3, 1), 1), tprod::shape_error);
  nn::layer_config bad = cfg;
  bad.heads = 3;
  CHECK_THROWS_AS(nn::make_encoder_params<double>(bad, tprod::dct{}, 1), tprod::shape_error);
}

// The float instantiations live in this file only (each one costs compile time in every file that has it).
TEST_CASE("L-MHA in float agrees with double") {
  auto pd = nn::make_attention_params<double>(8, 2, 4, tprod::dct{}, 5);
  auto pf = nn::make_attention_params<float>(8, 2, 4, tprod::dct{}, 5);
  pf.w_qkv.data() = to_float(pd.w_qkv.data());
  pf.b_qkv.data() = to_float(pd.b_qkv.data());
  pf.w_o.data() = to_float(pd.w_o.data());
  pf.b_o.data() = to_float(pd.b_o.data());
  const t3 x = random_tensor3<double>(12, 8, 4, 6);
  const nn::attention_mask m{true, {5, 6}};
  CHECK(max_diff(to_double(nn::attention_forward(pf, to_float(x), 2, m).first), nn::attention_forward(pd, x, 2, m).first) <
        200 * std::numeric_limits<float>::epsilon());
}

TEST_CASE("decoder layer: causal by default, and gradients for the input, the memory and every parameter") {
  using P = nn::norm_placement;
  const std::size_t batch = 2, len = 3, mlen = 4;
  for (auto place : {P::post, P::pre}) {
    CAPTURE(int(place));
    auto cfg = small_config(place, place == P::post ? nn::layer_norm_kind::original_domain : nn::layer_norm_kind::transform_domain,
                            nn::attention_variant::spectral, nn::activation::gelu, true, 2);
    auto prm = nn::make_decoder_params<double>(cfg, tprod::dct{}, 51);
    t3 x = random_tensor3<double>(batch * len, 4, 2, 52), mem = random_tensor3<double>(batch * mlen, 4, 2, 53);
    const nn::decoder_masks masks{{true, {}}, {false, {3, 4}}};
    // the output at token 0 ignores tokens 1, 2 of the same sequence
    t3 x2 = x;
    x2(2, 1, 1) += 1.0;
    const t3 y = nn::decoder_layer_forward(prm, x, mem, batch, masks).first,
             y2 = nn::decoder_layer_forward(prm, x2, mem, batch, masks).first;
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t j = 0; j < 4; ++j) {
        CHECK(y(0, j, k) == doctest::Approx(y2(0, j, k)).epsilon(1e-14));
        CHECK(y(1, j, k) == doctest::Approx(y2(1, j, k)).epsilon(1e-14));
        CHECK(y(len, j, k) == y2(len, j, k));
      }
    // padded encoder keys of sequence 0 (token 3) do not matter
    t3 mem2 = mem;
    mem2(3, 0, 0) += 5.0;
    CHECK(max_diff(nn::decoder_layer_forward(prm, x, mem2, batch, masks).first, y) < 1e-14);

    diff_map f;
    f.vars = {&x, &mem};
    f.names = {"x", "memory"};
    append_params(prm, f, "");
    f.forward = [&] { return nn::decoder_layer_forward(prm, x, mem, batch, masks).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::decoder_layer_backward(prm, nn::decoder_layer_forward(prm, x, mem, batch, masks).second, w);
      std::vector<t3> r{g.d_input, g.d_memory};
      append_grads(g.d_params, r);
      return r;
    };
    check_gradients(f, 54, 1e-6, 2);
  }
  auto prm = nn::make_decoder_params<double>(nn::paper000_config(8, 2, 8, 2), tprod::dct{}, 1);
  CHECK_THROWS_AS(nn::decoder_layer_forward(prm, random_tensor3<double>(6, 4, 2, 1), random_tensor3<double>(6, 3, 2, 1), 2),
                  tprod::shape_error);
}
