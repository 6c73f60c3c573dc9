// SPDX-License-Identifier: Apache-2.0
// The nn layers on device tensors against the CPU backend on the same inputs (float and double): the slice-linear
// tasks over column blocks, with and without bias and dX, and the L-linear layer's forward and backward under every
// real transform (DCT, identity, a real matrix_transform) at p ∈ {1, 2, 3, 16, 17}; the activations, the L-FFN
// and LayerNorm; AdamW and gradient clipping; the token embedding and the loss; multi-head attention;
// the encoder layer.
#include "cuda_test.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/embedding.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/nn/ffn.hpp"
#include "tprod/nn/layer_norm.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/loss.hpp"
#include "tprod/nn/optim.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {
// Self-attention on both: outputs, probabilities, dX and the parameters' gradients within `roundings` (twice that
// for the backward pass).
template <class T, class HostParams, class DeviceParams>
void check_self_attention(const HostParams& prm, const DeviceParams& dprm, const tensor3<T>& x, const tensor3<T>& g,
                          std::size_t batch, const nn::attention_mask& mask, std::size_t roundings) {
  CAPTURE(mask.causal);
  CAPTURE(mask.key_lengths.size());
  const auto [y, saved] = nn::attention_forward(prm, x, batch, mask);
  const auto [dy, dsaved] = nn::attention_forward(dprm, to_device(x), batch, mask);
  check_close(y, dy, roundings);
  check_close(saved.cache.probs, dsaved.cache.probs, roundings);
  const auto grads = nn::attention_backward(prm, saved, g);
  const auto dgrads = nn::attention_backward(dprm, dsaved, to_device(g));
  check_close(grads.d_input, dgrads.d_input, 2 * roundings);
  check_close(grads.d_params.w_qkv.data(), dgrads.d_params.w_qkv.data(), 2 * roundings);
  check_close(grads.d_params.b_qkv.data(), dgrads.d_params.b_qkv.data(), 2 * roundings);
  check_close(grads.d_params.w_o.data(), dgrads.d_params.w_o.data(), 2 * roundings);
}
}  // namespace

TEST_CASE_TEMPLATE("device slice_linear tasks equal the host's over column blocks", T, TPROD_DEVICE_REAL_SCALARS) {
  const auto host = detail::system_of<host_space>();
  const auto dev = detail::system_of<device_space>();
  // r rows, n inputs, W n×wide×p, columns c0 … c0+q−1
  struct shape {
    std::size_t r, n, wide, c0, q, p;
  };
  for (const shape s :
       {shape{5, 3, 7, 0, 7, 2}, shape{9, 4, 12, 4, 4, 3}, shape{1, 1, 3, 2, 1, 1}, shape{33, 17, 48, 16, 32, 17},
        shape{0, 3, 7, 2, 4, 2}}) {  // no rows: dW's and db's products have an empty inner dimension
    CAPTURE(s.r);
    CAPTURE(s.c0);
    CAPTURE(s.p);
    const auto x = random_tensor3<T>(s.r, s.n, s.p, 1), w = random_tensor3<T>(s.n, s.wide, s.p, 2);
    const auto b = random_tensor3<T>(1, s.wide, s.p, 3), dy = random_tensor3<T>(s.r, s.q, s.p, 4);
    const auto dx0 = random_tensor3<T>(s.r, s.n, s.p, 5);
    for (const bool bias : {true, false}) {
      const tensor3<T> bb = bias ? b : tensor3<T>(0, s.wide, s.p);
      tensor3<T> y(s.r, s.q, s.p);
      auto dvy = to_device(y);
      slice_linear_forward(host, x.dynamic_view(), w.dynamic_view(), bb.dynamic_view(), s.c0, y.dynamic_view());
      const auto dvx = to_device(x), dvw = to_device(w), dvb = to_device(bb), dvdy = to_device(dy);
      slice_linear_forward(dev, dvx.dynamic_view(), dvw.dynamic_view(), dvb.dynamic_view(), s.c0, dvy.dynamic_view());
      check_close(y, dvy, s.n);
      for (const bool accumulate : {false, true}) {
        // dW and db start random: the task writes only their columns c0 … c0+q−1
        auto dx = dx0;
        auto dw = random_tensor3<T>(s.n, s.wide, s.p, 6), db = bias ? random_tensor3<T>(1, s.wide, s.p, 7) : bb;
        auto ddx = to_device(dx), ddw = to_device(dw), ddb = to_device(db);
        slice_linear_backward(host, x.dynamic_view(), w.dynamic_view(), dy.dynamic_view(), s.c0, dx.dynamic_view(),
                              accumulate, dw.dynamic_view(), db.dynamic_view());
        slice_linear_backward(dev, dvx.dynamic_view(), dvw.dynamic_view(), dvdy.dynamic_view(), s.c0,
                              ddx.dynamic_view(), accumulate, ddw.dynamic_view(), ddb.dynamic_view());
        check_close(dx, ddx, s.q + 1);
        check_close(dw, ddw, s.r);
        check_close(db, ddb, s.r);
      }
      // without dX: dW and db only
      auto dw = random_tensor3<T>(s.n, s.wide, s.p, 6);
      auto ddw = to_device(dw);
      tensor3<T> none;
      device_tensor3<T> dnone;
      auto db = bb;
      auto ddb = to_device(db);
      slice_linear_backward(host, x.dynamic_view(), w.dynamic_view(), dy.dynamic_view(), s.c0, none.dynamic_view(),
                            false, dw.dynamic_view(), db.dynamic_view());
      slice_linear_backward(dev, dvx.dynamic_view(), dvw.dynamic_view(), dvdy.dynamic_view(), s.c0,
                            dnone.dynamic_view(), false, ddw.dynamic_view(), ddb.dynamic_view());
      check_close(dw, ddw, s.r);
      check_close(db, ddb, s.r);
    }
  }
}

TEST_CASE_TEMPLATE("device L-linear layer forward and backward equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  for (std::size_t p : test_tubes) {
    for_each_policy(p, [&](const auto& l) {
      using L = std::remove_cvref_t<decltype(l)>;
      if constexpr (nn::real_transform<L, T>) {
        CAPTURE(p);
        CAPTURE(std::string(L::name()));
        for (const bool bias : {true, false}) {
          const std::size_t r = 13, n = 6, q = 5;
          const auto prm = nn::make_linear_params<T>(n, q, p, l, 40 + p, bias);
          const auto dprm = nn::copy(prm, device_space{});
          const auto x = random_tensor3<T>(r, n, p, 41), g = random_tensor3<T>(r, q, p, 42);
          const auto [y, saved] = nn::linear_forward(prm, x);
          const auto [dy, dsaved] = nn::linear_forward(dprm, to_device(x));
          const std::size_t roundings = 2 * p + n;
          check_close(y, dy, roundings);
          check_close(saved.x_hat, dsaved.x_hat, p);
          const auto grads = nn::linear_backward(prm, saved, g);
          const auto dgrads = nn::linear_backward(dprm, dsaved, to_device(g));
          check_close(grads.d_input, dgrads.d_input, 2 * p + q);
          check_close(grads.d_params.weight, dgrads.d_params.weight, p + r);
          check_close(grads.d_params.bias, dgrads.d_params.bias, p + r);
          // the round trip through the device leaves the parameters as they were
          const auto back = nn::copy(dprm, host_space{});
          CHECK(back.weight.data().elements() == prm.weight.data().elements());
          CHECK(back.has_bias() == bias);
        }
      }
    });
  }
}

TEST_CASE_TEMPLATE("device layers on an empty batch: empty outputs and zero parameter gradients, as on the host", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  // No rows: every weight gradient is a product with an empty inner dimension, which cuBLAS refuses (its leading
  // dimension 0) and which must come out as zeros (the slice_linear case above starts them from random values).
  const std::size_t p = 4, n = 6, q = 5, hidden = 10;
  const auto lin = nn::make_linear_params<T>(n, q, p, dct{}, 1, true);
  const auto [y, saved] = nn::linear_forward(nn::copy(lin, device_space{}), device_tensor3<T>(0, n, p));
  CHECK(y.extents() == dextents3(0, q, p));
  const auto g = nn::linear_backward(nn::copy(lin, device_space{}), saved, device_tensor3<T>(0, q, p));
  CHECK(frobenius_norm(to_host(g.d_params.weight.data())) == 0);
  CHECK(frobenius_norm(to_host(g.d_params.bias.data())) == 0);
  CHECK(g.d_input.extents() == dextents3(0, n, p));

  const auto ffn = nn::copy(nn::make_ffn_params<T>(n, hidden, p, dct{}, 2, nn::activation::gelu, true), device_space{});
  const auto [fy, fsaved] = nn::ffn_forward(ffn, device_tensor3<T>(0, n, p));
  CHECK(fy.extents() == dextents3(0, n, p));
  const auto fg = nn::ffn_backward(ffn, fsaved, device_tensor3<T>(0, n, p));
  CHECK(frobenius_norm(to_host(fg.d_params.w1.data())) == 0);
  CHECK(frobenius_norm(to_host(fg.d_params.w2.data())) == 0);

  const auto ln = nn::copy(nn::make_layer_norm_params<T>(n, p, nn::layer_norm_kind::original_domain, 1e-5),
                           device_space{});
  const auto [ly, lsaved] = nn::layer_norm_forward(ln, device_tensor3<T>(0, n, p));
  const auto lg = nn::layer_norm_backward(ln, lsaved, device_tensor3<T>(0, n, p));
  CHECK(frobenius_norm(to_host(lg.d_params.gamma)) == 0);
  CHECK(frobenius_norm(to_host(lg.d_params.beta)) == 0);
}

TEST_CASE("device L-linear layer refuses an input of the wrong width, naming the shapes") {
  const auto prm = nn::copy(nn::make_linear_params<float>(6, 5, 4, dct{}, 1), device_space{});
  const device_tensor3<float> x(3, 7, 4);
  CHECK_THROWS_WITH_AS(nn::linear_forward(prm, x), doctest::Contains("3x7x4"), shape_error);
}

TEST_CASE_TEMPLATE("device activations and their derivatives equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  // values across both sides of 0 and the tails, where erf, exp and tanh saturate
  auto x = random_tensor3<T>(37, 5, 3, 50);
  x.elements() *= T(6);
  const auto g = random_tensor3<T>(37, 5, 3, 51);
  const auto dx = to_device(x), dg = to_device(g);
  for (const auto a : {nn::activation::relu, nn::activation::gelu, nn::activation::gelu_tanh, nn::activation::tanh}) {
    CAPTURE(std::string(nn::name(a)));
    tensor3<T> y, d;
    device_tensor3<T> dy, dd;
    nn::activation_forward(a, x, y);
    nn::activation_forward(a, dx, dy);
    check_close(y, dy, 8);
    nn::activation_backward(a, x, g, d);
    nn::activation_backward(a, dx, dg, dd);
    check_close(d, dd, 8);
    // y = σ(x) with x ← σ'(x) in one pass
    auto slope = x;
    auto dslope = dx;
    nn::activation_forward_keep_derivative(a, slope, y);
    nn::activation_forward_keep_derivative(a, dslope, dy);
    check_close(y, dy, 8);
    check_close(slope, dslope, 8);
  }
}

TEST_CASE_TEMPLATE("device L-FFN forward and backward equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  for (std::size_t p : {1, 4, 17}) {
    for (const auto a : {nn::activation::relu, nn::activation::gelu}) {
      for (const bool bias : {true, false}) {
        CAPTURE(p);
        CAPTURE(bias);
        const std::size_t r = 11, ds = 6, hidden = 10;
        const auto prm = nn::make_ffn_params<T>(ds, hidden, p, dct{}, 60 + p, a, bias);
        const auto dprm = nn::copy(prm, device_space{});
        const auto x = random_tensor3<T>(r, ds, p, 61), g = random_tensor3<T>(r, ds, p, 62);
        const auto [y, saved] = nn::ffn_forward(prm, x);
        const auto [dy, dsaved] = nn::ffn_forward(dprm, to_device(x));
        const std::size_t roundings = 2 * p + ds + hidden;
        check_close(y, dy, roundings);
        const auto grads = nn::ffn_backward(prm, saved, g);
        const auto dgrads = nn::ffn_backward(dprm, dsaved, to_device(g));
        check_close(grads.d_input, dgrads.d_input, 2 * roundings);
        check_close(grads.d_params.w1.data(), dgrads.d_params.w1.data(), roundings + r);
        check_close(grads.d_params.w2.data(), dgrads.d_params.w2.data(), roundings + r);
        if (bias) {
          check_close(grads.d_params.b1.data(), dgrads.d_params.b1.data(), roundings + r);
          check_close(grads.d_params.b2.data(), dgrads.d_params.b2.data(), roundings + r);
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("device LayerNorm of both kinds equals the host's, forward and backward", T, TPROD_DEVICE_REAL_SCALARS) {
  for (const auto kind : {nn::layer_norm_kind::original_domain, nn::layer_norm_kind::transform_domain}) {
    // 300 rows: more than one block of the parameter-gradient reduction; one constant row (σ = 0)
    for (const auto& [r, n, p] : {std::tuple{300, 7, 3}, std::tuple{5, 1, 2}, std::tuple{17, 33, 1}}) {
      CAPTURE(r);
      CAPTURE(n);
      CAPTURE(int(kind));
      auto prm = nn::make_layer_norm_params<T>(n, p, kind, 1e-5);
      prm.gamma = random_tensor3<T>(1, n, p, 70);
      prm.beta = random_tensor3<T>(1, n, p, 71);
      auto x = random_tensor3<T>(r, n, p, 72);
      for (std::size_t j = 0; j < std::size_t(n); ++j) x(0, j, 0) = T(0.25);
      const auto g = random_tensor3<T>(r, n, p, 73);
      const auto dprm = nn::copy(prm, device_space{});
      const auto [y, saved] = nn::layer_norm_forward(prm, x);
      const auto [dy, dsaved] = nn::layer_norm_forward(dprm, to_device(x));
      check_close(y, dy, 4 * n);
      check_close(saved.inv_scale, dsaved.inv_scale, 4 * n);
      check_close(saved.coupling, dsaved.coupling, 4 * n);
      const auto grads = nn::layer_norm_backward(prm, saved, g);
      const auto dgrads = nn::layer_norm_backward(dprm, dsaved, to_device(g));
      check_close(grads.d_input, dgrads.d_input, 8 * n);
      check_close(grads.d_params.gamma, dgrads.d_params.gamma, 4 * r);
      check_close(grads.d_params.beta, dgrads.d_params.beta, 4 * r);
      // in place: dX in dY's memory
      auto din = to_device(g);
      auto dgrad_params = nn::zeros_like(dprm);
      nn::layer_norm_backward(dprm, dsaved, din, din, dgrad_params);
      check_close(grads.d_input, din, 8 * n);
      check_close(grads.d_params.gamma, dgrad_params.gamma, 4 * r);
    }
  }
}

TEST_CASE_TEMPLATE("device AdamW steps and gradient clipping equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  // three tensors of different sizes (one larger than a block row of the launch), five steps
  std::vector<tensor3<T>> params, grads;
  for (const auto& [m, n, p] : {std::tuple{3, 4, 2}, std::tuple{1, 1, 1}, std::tuple{300, 50, 3}}) {
    params.push_back(random_tensor3<T>(m, n, p, 80 + m));
    grads.push_back(random_tensor3<T>(m, n, p, 90 + m));
  }
  std::vector<device_tensor3<T>> dparams, dgrads;
  for (std::size_t i = 0; i < params.size(); ++i) {
    dparams.push_back(to_device(params[i]));
    dgrads.push_back(to_device(grads[i]));
  }
  nn::parameter_refs<T> p, g;
  nn::parameter_refs<T, device_space> dp, dg;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string name = "t" + std::to_string(i);
    p.tensors.push_back(&params[i]);
    g.tensors.push_back(&grads[i]);
    dp.tensors.push_back(&dparams[i]);
    dg.tensors.push_back(&dgrads[i]);
    for (auto* refs : {&p.names, &g.names, &dp.names, &dg.names}) refs->push_back(name);
  }
  const double norm = nn::grad_norm(g);
  CHECK(nn::grad_norm(dg) == doctest::Approx(norm).epsilon(tol<T>(2 * g.count())));
  // clipping to half the norm scales every gradient by 1/2 on both
  CHECK(nn::clip_grad_norm(dg, norm / 2) ==
        doctest::Approx(nn::clip_grad_norm(g, norm / 2)).epsilon(tol<T>(g.count())));
  for (std::size_t i = 0; i < grads.size(); ++i) check_close(grads[i], dgrads[i], 2);
  nn::adamw<T> opt({.lr = 0.01, .weight_decay = 0.1});
  nn::adamw<T, device_space> dopt({.lr = 0.01, .weight_decay = 0.1});
  for (int step = 0; step < 5; ++step) {
    opt.step(p, g, 0.01 * (step + 1));
    dopt.step(dp, dg, 0.01 * (step + 1));
  }
  CHECK(dopt.steps() == 5);
  for (std::size_t i = 0; i < params.size(); ++i) {
    check_close(params[i], dparams[i], 64);
    check_close(opt.first_moments()[i], dopt.first_moments()[i], 16);
    check_close(opt.second_moments()[i], dopt.second_moments()[i], 16);
  }
}

TEST_CASE_TEMPLATE("device token embedding and its gradient equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  const auto e = nn::make_embedding_params<T>(11, 10, 100);
  const auto de = nn::copy(e, device_space{});
  // repeated tokens (their gradient rows add up), the first and last of the vocabulary; p = 3 pads 10 to 12
  const std::vector<std::size_t> tokens{3, 0, 10, 3, 7, 3, 0};
  for (std::size_t p : {1, 3}) {
    CAPTURE(p);
    const auto x = nn::embedding_forward(e, tokens, p);
    const auto dx = nn::embedding_forward(de, tokens, p);
    check_close(x, dx, 1);
    const auto g = random_tensor3<T>(x.m(), x.n(), x.p(), 101);
    check_close(nn::embedding_backward(e, tokens, g).table, nn::embedding_backward(de, tokens, to_device(g)).table, 4);
  }
  CHECK_THROWS_WITH_AS(nn::embedding_forward(de, {1, 11}, 1), doctest::Contains("token 11 at position 1"), shape_error);
}

TEST_CASE_TEMPLATE("device softmax cross-entropy equals the host's, with ignored rows", T, TPROD_DEVICE_REAL_SCALARS) {
  auto logits = random_tensor3<T>(37, 9, 1, 110);
  logits.elements() *= T(30);  // large logits: the shift by the row maximum must keep exp finite
  std::vector<std::size_t> labels(37);
  for (std::size_t b = 0; b < labels.size(); ++b) labels[b] = b % 5 == 4 ? nn::ignore_label : (b * 7) % 9;
  const auto r = nn::softmax_cross_entropy(logits, labels);
  const auto dr = nn::softmax_cross_entropy(to_device(logits), labels);
  CHECK(dr.counted == r.counted);
  CHECK(double(dr.loss) == doctest::Approx(double(r.loss)).epsilon(tol<T>(9 * 37)));
  CHECK(dr.predicted == r.predicted);
  check_close(r.d_logits, dr.d_logits, 9);
}

TEST_CASE_TEMPLATE("device L-MHA equals the host's: both variants, masks, self- and cross-attention", T, TPROD_DEVICE_REAL_SCALARS) {
  const std::size_t batch = 3, tq = 5, tk = 7, ds = 6, heads = 2;
  for (std::size_t p : {1, 4}) {
    for (const auto variant : {nn::attention_variant::spectral, nn::attention_variant::t_softmax}) {
      CAPTURE(p);
      CAPTURE(int(variant));
      const auto prm = nn::make_attention_params<T>(ds, heads, p, dct{}, 120 + p, true, variant);
      const auto dprm = nn::copy(prm, device_space{});
      const auto x = random_tensor3<T>(batch * tq, ds, p, 121), g = random_tensor3<T>(batch * tq, ds, p, 122);
      const std::size_t roundings = 4 * p + 3 * ds + tk;
      // self-attention: no mask, causal, key padding (sequence 1 has 2 of its 5 keys), both
      const nn::attention_mask masks[] = {{}, {true, {}}, {false, {5, 2, 4}}, {true, {5, 2, 4}}};
      for (const nn::attention_mask& mask : masks) check_self_attention(prm, dprm, x, g, batch, mask, roundings);
      // cross-attention: T_q = 5 queries against T_k = 7 memory rows per sequence, memory padding
      const auto memory = random_tensor3<T>(batch * tk, ds, p, 123);
      const nn::attention_mask padding{false, {7, 3, 6}};
      const auto [y, saved] = nn::cross_attention_forward(prm, x, memory, batch, padding);
      const auto [dy, dsaved] = nn::cross_attention_forward(dprm, to_device(x), to_device(memory), batch, padding);
      check_close(y, dy, roundings);
      const auto grads = nn::attention_backward(prm, saved, g);
      const auto dgrads = nn::attention_backward(dprm, dsaved, to_device(g));
      check_close(grads.d_input, dgrads.d_input, 2 * roundings);
      check_close(grads.d_memory, dgrads.d_memory, 2 * roundings);
      check_close(grads.d_params.w_qkv.data(), dgrads.d_params.w_qkv.data(), 2 * roundings);
    }
  }
}

TEST_CASE_TEMPLATE("device dimension-wise attention (paper 003) equals the host's, with and without key padding", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  // 3 sequences of 6 tokens, 2 heads of width 4 (and 1 head of width 8), p = 1 and 3; key padding leaves sequence 1
  // with 2 valid tokens (its padded rows of dQ and dK must be 0, as on the host) and sequence 2 with all 6
  const std::size_t batch = 3, t = 6, ds = 8;
  for (std::size_t heads : {1, 2}) {
    for (std::size_t p : {1, 3}) {
      CAPTURE(heads);
      CAPTURE(p);
      const auto prm = nn::make_attention_params<T>(ds, heads, p, dct{}, 130 + p, true,
                                                    nn::attention_variant::dimension_wise);
      const auto dprm = nn::copy(prm, device_space{});
      const auto x = random_tensor3<T>(batch * t, ds, p, 131), g = random_tensor3<T>(batch * t, ds, p, 132);
      const std::size_t roundings = 4 * p + 3 * ds + t;
      for (const nn::attention_mask& mask : {nn::attention_mask{}, nn::attention_mask{false, {4, 2, 6}}})
        check_self_attention(prm, dprm, x, g, batch, mask, roundings);
    }
  }
  // the host's refusals hold on the device: no causal mask, self-attention only
  const auto dprm = nn::copy(
      nn::make_attention_params<float>(4, 2, 2, dct{}, 1, true, nn::attention_variant::dimension_wise), device_space{});
  CHECK_THROWS_WITH_AS(nn::attention_forward(dprm, device_tensor3<float>(6, 4, 2), 2, nn::attention_mask{true, {}}),
                       doctest::Contains("no causal mask"), shape_error);
}

TEST_CASE_TEMPLATE("device encoder layer equals the host's: paper 000's post-norm and paper 001's pre-norm", T, TPROD_DEVICE_REAL_SCALARS) {
  // post: original-domain LN, spectral attention, GELU, biases; pre: transform-domain LN, t-softmax, ReLU, none
  nn::layer_config post{.width = 8, .slices = 4, .heads = 2, .hidden = 16, .act = nn::activation::gelu};
  nn::layer_config pre = post;
  pre.placement = nn::norm_placement::pre;
  pre.norm = nn::layer_norm_kind::transform_domain;
  pre.attention = nn::attention_variant::t_softmax;
  pre.act = nn::activation::relu;
  pre.bias = false;
  for (const auto& cfg : {post, pre}) {
    CAPTURE(int(cfg.placement));
    const std::size_t batch = 3, len = 5, rows = batch * len;
    const auto prm = nn::make_encoder_params<T>(cfg, dct{}, 130);
    const auto dprm = nn::copy(prm, device_space{});
    const auto x = random_tensor3<T>(rows, 8, 4, 131), g = random_tensor3<T>(rows, 8, 4, 132);
    const nn::attention_mask mask{false, {5, 3, 4}};
    const auto [y, saved] = nn::encoder_layer_forward(prm, x, batch, mask);
    const auto [dy, dsaved] = nn::encoder_layer_forward(dprm, to_device(x), batch, mask);
    const std::size_t roundings = 8 * (4 + 8 + 16);
    check_close(y, dy, roundings);
    const auto grads = nn::encoder_layer_backward(prm, saved, g);
    const auto dgrads = nn::encoder_layer_backward(dprm, dsaved, to_device(g));
    check_close(grads.d_input, dgrads.d_input, 2 * roundings);
    check_close(grads.d_params.attn.w_qkv.data(), dgrads.d_params.attn.w_qkv.data(), 2 * roundings);
    check_close(grads.d_params.ffn.w1.data(), dgrads.d_params.ffn.w1.data(), 2 * roundings);
    check_close(grads.d_params.ln1.gamma, dgrads.d_params.ln1.gamma, 2 * roundings);
    check_close(grads.d_params.ln2.beta, dgrads.d_params.ln2.beta, 2 * roundings);
  }
}
