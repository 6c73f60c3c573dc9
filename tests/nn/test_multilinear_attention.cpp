// SPDX-License-Identifier: Apache-2.0
// Multi-linear attention (paper 003 eq. 2) and TensorCoder's dimension-wise attention: dense references,
// masks, gradients, errors, parameter counts, and both inside an encoder layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>

#include "nn_test_util.hpp"
#include "small_models.hpp"
#include "tprod/decomp/multilinear_attention.hpp"
#include "tprod/nn/model/attention_layer.hpp"
#include "tprod/nn/model/classifier.hpp"
#include "tprod/nn/model/multilinear_encoder.hpp"
#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/nn/param_count.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

namespace {

using mla_params = nn::multilinear_attention_params<double, tprod::identity_transform>;

/// Rows b·N … b·N + N − 1 of slice 0.
dmat rows_of(const t3& x, std::size_t b, std::size_t n) {
  return slice(x, 0).middleRows(Eigen::Index(b * n), Eigen::Index(n));
}

/// The cores as order-3 tensors: column block t of the stored cores (full), or diagonal_core(g_t).
std::vector<tprod::ndtensor<double>> dense_cores(const mla_params& a) {
  const dmat c = slice(a.cores.data(), 0);
  const std::size_t r = a.rank();
  std::vector<tprod::ndtensor<double>> cores;
  for (std::size_t t = 0; t < a.terms; ++t) {
    if (a.core == nn::multilinear_core::superdiagonal) {
      cores.push_back(tprod::diagonal_core(Eigen::VectorXd(c.col(Eigen::Index(t)))));
    } else {
      const dmat block = c.middleCols(Eigen::Index(t * r * r), Eigen::Index(r * r));
      cores.push_back(tprod::from_column_major<double>({r, r, r}, block.data(), std::size_t(block.size())));
    }
  }
  return cores;
}

/// Eq. 2 per sequence with the decomp functions (which form 𝒯 ∈ ℝ^{N×N×N}), padded K′ and V′ rows zeroed.
/// Causal: output i from its own evaluation with the K′ and V′ rows of the tokens after i zeroed as well, so that
/// 𝒯(i, j, m) keeps only j, m ≤ i.
t3 dense_reference(const mla_params& a, const t3& x, std::size_t batch, const std::vector<std::size_t>& lengths,
                   bool causal = false) {
  const std::size_t n = a.length(), r = a.rank();
  const dmat w = slice(a.w_qkv.data(), 0), bias = slice(a.b_qkv.data(), 0);
  t3 y(batch * n, a.width(), 1);
  for (std::size_t b = 0; b < batch; ++b) {
    const dmat qkv = add_bias(rows_of(x, b, n) * w, bias);
    const auto valid = Eigen::Index(lengths.empty() ? n : lengths[b]);
    for (std::size_t i = 0; i < n; ++i) {
      const Eigen::Index seen = causal ? std::min(valid, Eigen::Index(i) + 1) : valid;
      dmat k = qkv.middleCols(Eigen::Index(r), Eigen::Index(r)), v = qkv.rightCols(Eigen::Index(r));
      k.bottomRows(Eigen::Index(n) - seen).setZero();
      v.bottomRows(Eigen::Index(n) - seen).setZero();
      const dmat yb = add_bias(
          tprod::multilinear_attention(dense_cores(a), qkv.leftCols(Eigen::Index(r)), k, v, slice(a.w_o.data(), 0)),
          slice(a.b_o.data(), 0));
      for (std::size_t c = 0; c < a.width(); ++c) y(b * n + i, c, 0) = yb(Eigen::Index(i), Eigen::Index(c));
    }
  }
  return y;
}

/// Dimension-wise attention of one head block by plain matrices: A = softmax_rows(Q_nᵀK_n/√n), O = V·Aᵀ.
dmat dimension_wise_reference(const dmat& q, const dmat& k, const dmat& v, Eigen::Index n) {
  dmat s = q.topRows(n).transpose() * k.topRows(n) / std::sqrt(double(n));
  for (Eigen::Index i = 0; i < s.rows(); ++i) {
    s.row(i) = (s.row(i).array() - s.row(i).maxCoeff()).exp();
    s.row(i) /= s.row(i).sum();
  }
  return v * s.transpose();
}

template <class L>
void check_multilinear_gradients(const L& l, std::size_t p, nn::multilinear_core core, std::size_t terms,
                                 const nn::attention_mask& mask) {
  const std::size_t batch = 2, n = 4, d = 5, r = 3;
  auto prm = nn::make_multilinear_attention_params<double>(d, n, r, terms, p, l, 3, core);
  t3 x = random_tensor3<double>(batch * n, d, p, 4);
  diff_map f;
  f.vars = {&x, &prm.w_qkv.data(), &prm.b_qkv.data(), &prm.cores.data(), &prm.w_o.data(), &prm.b_o.data()};
  f.names = {"x", "w_qkv", "b_qkv", "cores", "w_o", "b_o"};
  f.forward = [&] { return nn::multilinear_attention_forward(prm, x, batch, mask).first; };
  f.backward = [&](const t3& w) {
    auto g = nn::multilinear_attention_backward(prm, nn::multilinear_attention_forward(prm, x, batch, mask).second, w);
    return std::vector<t3>{g.d_input,
                           g.d_params.w_qkv.data(),
                           g.d_params.b_qkv.data(),
                           g.d_params.cores.data(),
                           g.d_params.w_o.data(),
                           g.d_params.b_o.data()};
  };
  check_gradients(f, 17);
}

}  // namespace

TEST_CASE("multi-linear attention equals eq. 2 formed densely with the decomp functions") {
  const std::size_t batch = 2, n = 4, d = 5, r = 3;
  const t3 x = random_tensor3<double>(batch * n, d, 1, 1);
  // Entries are O(1) sums of a few hundred products: agreement to 1e3·ε of the output scale.
  const auto tol = [](const t3& y) { return 1e3 * std::numeric_limits<double>::epsilon() * (1 + max_abs(y)); };
  SUBCASE("P = 1, superdiagonal core") {
    auto a = nn::make_multilinear_attention_params<double>(d, n, r, 1, 1, tprod::identity_transform{}, 2);
    const t3 ref = dense_reference(a, x, batch, {});
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch).first, ref) <= tol(ref));
  }
  SUBCASE("P = 3, superdiagonal cores, padding") {
    auto a = nn::make_multilinear_attention_params<double>(d, n, r, 3, 1, tprod::identity_transform{}, 5);
    const t3 ref = dense_reference(a, x, batch, {2, 4});
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch, {false, {2, 4}}).first, ref) <= tol(ref));
  }
  SUBCASE("P = 2, full cores, padding") {
    auto a = nn::make_multilinear_attention_params<double>(d, n, r, 2, 1, tprod::identity_transform{}, 6,
                                                           nn::multilinear_core::full);
    const t3 ref = dense_reference(a, x, batch, {3, 1});
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch, {false, {3, 1}}).first, ref) <= tol(ref));
  }
  SUBCASE("causal: P = 3, superdiagonal cores, with and without padding") {
    auto a = nn::make_multilinear_attention_params<double>(d, n, r, 3, 1, tprod::identity_transform{}, 8);
    const t3 ref = dense_reference(a, x, batch, {}, true);
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch, {true, {}}).first, ref) <= tol(ref));
    CHECK(max_diff(ref, dense_reference(a, x, batch, {})) > 1e-3);  // the mask changes the outputs
    const t3 padded = dense_reference(a, x, batch, {2, 4}, true);
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch, {true, {2, 4}}).first, padded) <= tol(padded));
  }
  SUBCASE("causal: P = 2, full cores, padding") {
    auto a = nn::make_multilinear_attention_params<double>(d, n, r, 2, 1, tprod::identity_transform{}, 9,
                                                           nn::multilinear_core::full);
    const t3 ref = dense_reference(a, x, batch, {3, 4}, true);
    CHECK(max_diff(nn::multilinear_attention_forward(a, x, batch, {true, {3, 4}}).first, ref) <= tol(ref));
  }
}

TEST_CASE("dimension-wise attention equals its definition per head") {
  const std::size_t batch = 2, len = 5, d = 6, heads = 2, dh = d / heads;
  auto a = nn::make_attention_params<double>(d, heads, 1, tprod::identity_transform{}, 3, true,
                                             nn::attention_variant::dimension_wise);
  const t3 x = random_tensor3<double>(batch * len, d, 1, 4);
  const std::vector<std::size_t> lengths{5, 3};
  const t3 y = nn::attention_forward(a, x, batch, {false, lengths}).first;
  const dmat w = slice(a.w_qkv.data(), 0), wo = slice(a.w_o.data(), 0);
  for (std::size_t b = 0; b < batch; ++b) {
    const dmat qkv = add_bias(rows_of(x, b, len) * w, slice(a.b_qkv.data(), 0));
    dmat heads_out = dmat::Zero(Eigen::Index(len), Eigen::Index(d));
    for (std::size_t j = 0; j < heads; ++j) {
      const auto col = [&](std::size_t part) {
        return qkv.middleCols(Eigen::Index(part * d + j * dh), Eigen::Index(dh));
      };
      heads_out.middleCols(Eigen::Index(j * dh), Eigen::Index(dh)) =
          dimension_wise_reference(col(0), col(1), col(2), Eigen::Index(lengths[b]));
    }
    const dmat ref = add_bias(heads_out * wo, slice(a.b_o.data(), 0));
    CHECK((rows_of(y, b, len) - ref).cwiseAbs().maxCoeff() <= 1e3 * std::numeric_limits<double>::epsilon());
  }
}

TEST_CASE("padded tokens change no valid output of either attention") {
  const std::size_t batch = 2, n = 4, d = 6, p = 2;
  const t3 x = random_tensor3<double>(batch * n, d, p, 3);
  t3 x2 = x;
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t j = 0; j < d; ++j) {
      x2(3, j, k) += 1.0;      // token 3 of sequence 0 (length 3)
      x2(n + 2, j, k) -= 2.0;  // token 2 of sequence 1 (length 2)
    }
  const nn::attention_mask pad{false, {3, 2}};
  const auto same_valid = [&](const t3& y, const t3& y2) {
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t j = 0; j < d; ++j) {
        for (std::size_t t = 0; t < 3; ++t) CHECK(y(t, j, k) == doctest::Approx(y2(t, j, k)).epsilon(1e-13));
        for (std::size_t t = 0; t < 2; ++t) CHECK(y(n + t, j, k) == doctest::Approx(y2(n + t, j, k)).epsilon(1e-13));
      }
  };
  SUBCASE("multi-linear") {
    for (auto core : {nn::multilinear_core::superdiagonal, nn::multilinear_core::full}) {
      auto a = nn::make_multilinear_attention_params<double>(d, n, 3, 2, p, tprod::dct{}, 2, core);
      const t3 y = nn::multilinear_attention_forward(a, x, batch, pad).first;
      same_valid(y, nn::multilinear_attention_forward(a, x2, batch, pad).first);
      CHECK(max_diff(y, nn::multilinear_attention_forward(a, x2, batch).first) > 1e-3);  // unmasked, they count
    }
  }
  SUBCASE("dimension-wise") {
    auto a = nn::make_attention_params<double>(d, 2, p, tprod::dct{}, 2, true, nn::attention_variant::dimension_wise);
    same_valid(nn::attention_forward(a, x, batch, pad).first, nn::attention_forward(a, x2, batch, pad).first);
  }
}

TEST_CASE("multi-linear and dimension-wise attention gradients pass finite differences and the adjoint identity") {
  SUBCASE("multi-linear, superdiagonal, P = 2, dct, padding") {
    check_multilinear_gradients(tprod::dct{}, 2, nn::multilinear_core::superdiagonal, 2, {false, {3, 4}});
  }
  SUBCASE("multi-linear, full cores, P = 2, non-orthogonal transform") {
    check_multilinear_gradients(random_transform(2, 5), 2, nn::multilinear_core::full, 2, {false, {4, 2}});
  }
  SUBCASE("multi-linear, causal, superdiagonal, P = 2, dct, padding") {
    check_multilinear_gradients(tprod::dct{}, 2, nn::multilinear_core::superdiagonal, 2, {true, {3, 4}});
  }
  SUBCASE("multi-linear, causal, full cores, P = 1, non-orthogonal transform") {
    check_multilinear_gradients(random_transform(2, 5), 2, nn::multilinear_core::full, 1, {true, {}});
  }
  SUBCASE("dimension-wise, dct, padding") {
    const std::size_t batch = 2, len = 4, d = 4, p = 2;
    auto prm = nn::make_attention_params<double>(d, 2, p, tprod::dct{}, 7, true, nn::attention_variant::dimension_wise);
    t3 x = random_tensor3<double>(batch * len, d, p, 8);
    const nn::attention_mask mask{false, {3, 4}};
    diff_map f;
    f.vars = {&x, &prm.w_qkv.data(), &prm.b_qkv.data(), &prm.w_o.data(), &prm.b_o.data()};
    f.names = {"x", "w_qkv", "b_qkv", "w_o", "b_o"};
    f.forward = [&] { return nn::attention_forward(prm, x, batch, mask).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::attention_backward(prm, nn::attention_forward(prm, x, batch, mask).second, w);
      return std::vector<t3>{g.d_input, g.d_params.w_qkv.data(), g.d_params.b_qkv.data(), g.d_params.w_o.data(),
                             g.d_params.b_o.data()};
    };
    check_gradients(f, 23);
  }
}

TEST_CASE("encoder layers with multi-linear or dimension-wise attention: gradients through the whole layer") {
  const std::size_t batch = 2, n = 3, p = 2;
  nn::layer_config cfg = nn::paper000_config(8, 2, 8, p);
  t3 x = random_tensor3<double>(batch * n, cfg.width, p, 2);
  const nn::attention_mask mask{false, {2, 3}};
  const auto check_layer = [&](auto prm) {
    diff_map f;
    f.vars = {&x, &prm.attn.w_qkv.data(), &prm.ffn.w1.data()};
    f.names = {"x", "attn.w_qkv", "ffn.w1"};
    f.forward = [&] { return nn::encoder_layer_forward(prm, x, batch, mask).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::encoder_layer_backward(prm, nn::encoder_layer_forward(prm, x, batch, mask).second, w);
      return std::vector<t3>{g.d_input, g.d_params.attn.w_qkv.data(), g.d_params.ffn.w1.data()};
    };
    check_gradients(f, 5);
  };
  SUBCASE("multi-linear") {
    check_layer(nn::make_encoder_params_with<double>(
        cfg, tprod::dct{}, 1, nn::make_multilinear_attention_params<double>(cfg.width, n, 2, 2, p, tprod::dct{}, 3)));
  }
  SUBCASE("dimension-wise") {
    cfg.attention = nn::attention_variant::dimension_wise;
    check_layer(nn::make_encoder_params<double>(cfg, tprod::dct{}, 1));
  }
}

TEST_CASE("attention_layer with multi-linear attention: the functions' results, gradients added per backward pass") {
  const std::size_t batch = 2, n = 4, d = 5;
  const auto prm = nn::make_multilinear_attention_params<double>(d, n, 3, 2, 2, tprod::dct{}, 4);
  nn::attention_layer<double, tprod::dct, nn::multilinear_attention_params<double, tprod::dct>> layer(prm, "mla");
  const t3 x = random_tensor3<double>(batch * n, d, 2, 5), dy = random_tensor3<double>(batch * n, d, 2, 6);
  const nn::batch b{batch, {}, {3, 4}, nn::phase::train};
  const auto [y, saved] = nn::multilinear_attention_forward(prm, x, batch, {false, b.lengths});
  const auto g = nn::multilinear_attention_backward(prm, saved, dy);
  CHECK(max_diff(layer.forward(x, b), y) == 0);
  CHECK(max_diff(layer.backward(dy), g.d_input) == 0);
  layer.backward(dy);  // a second pass adds the same gradients again
  std::vector<std::string> names;
  layer.for_each_parameter([&](std::string_view name, t3&, t3& grad) {
    names.emplace_back(name);
    if (name == "mla.w_o") CHECK(max_diff(grad, 2.0 * g.d_params.w_o.data()) <= 1e-13 * (1 + max_abs(grad)));
  });
  CHECK(names == std::vector<std::string>{"mla.w_qkv", "mla.b_qkv", "mla.cores", "mla.w_o", "mla.b_o"});
}

TEST_CASE("multi-linear attention started from trained multi-head attention keeps its projections") {
  // DCT over 3 tubes: the columns are copied in the transform domain, which must equal copying them in space.
  const std::size_t d = 6, p = 3, n = 4;
  const auto a = nn::make_attention_params<double>(d, 2, p, tprod::dct{}, 7);
  const t3 w = tprod::inverse_transform(a.w_qkv), bias = tprod::inverse_transform(a.b_qkv);
  for (std::size_t rank : {std::size_t(1), std::size_t(4), d}) {
    CAPTURE(rank);
    const auto ml = nn::multilinear_attention_from(a, n, rank, 2, 11);
    const t3 w_ml = tprod::inverse_transform(ml.w_qkv), b_ml = tprod::inverse_transform(ml.b_qkv);
    REQUIRE(w_ml.n() == 3 * rank);
    double worst = 0;
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t block = 0; block < 3; ++block)
        for (std::size_t c = 0; c < rank; ++c) {
          worst = std::max(worst, std::abs(b_ml(0, block * rank + c, k) - bias(0, block * d + c, k)));
          for (std::size_t i = 0; i < d; ++i)
            worst = std::max(worst, std::abs(w_ml(i, block * rank + c, k) - w(i, block * d + c, k)));
        }
    CHECK(worst <= 8 * std::numeric_limits<double>::epsilon());
    CHECK(max_diff(ml.b_o.data(), a.b_o.data()) == 0);
    // The parts multi-head attention has no counterpart for are the documented fresh draws.
    const auto fresh = nn::make_multilinear_attention_params<double>(d, n, rank, 2, p, tprod::dct{}, 11);
    CHECK(max_diff(ml.cores.data(), fresh.cores.data()) == 0);
    CHECK(max_diff(ml.w_o.data(), fresh.w_o.data()) == 0);
    CHECK(ml.length() == n);
  }
  CHECK_THROWS_AS(nn::multilinear_attention_from(a, n, 0, 2, 1), tprod::shape_error);
  CHECK_THROWS_AS(nn::multilinear_attention_from(a, n, d + 1, 2, 1), tprod::shape_error);
}

TEST_CASE("a classifier's encoder given multi-linear attention: the other layers and parameters carried across") {
  auto c = tprod::test::small_text_config(5);
  c.slices = 1;  // the standard attention that a checkpoint's model has
  const std::size_t n = 5, rank = 3;
  auto model = nn::make_text_classifier<double>(c, tprod::identity_transform{});
  auto reference = nn::make_text_classifier<double>(c, tprod::identity_transform{});  // the same seed: equal weights
  std::map<std::string, t3> before;
  model.for_each_parameter([&](std::string_view name, t3& value, t3&) { before.emplace(std::string(name), value); });
  auto converted = nn::with_layer_replaced<3>(std::move(model), [&](auto&& encoder) {
    return nn::with_multilinear_attention(std::move(encoder), n, rank, 2, 17);
  });
  std::size_t kept = 0, replaced = 0;
  converted.for_each_parameter([&](std::string_view name, t3& value, t3&) {
    CAPTURE(name);
    if (name.find(".attn.") == std::string_view::npos) {
      REQUIRE(before.count(std::string(name)) == 1);
      CHECK(max_diff(value, before.at(std::string(name))) == 0);
      ++kept;
    } else {
      ++replaced;
    }
  });
  CHECK(kept == before.size() - 2 * 4);  // every parameter but the layers' four attention tensors
  CHECK(replaced == 2 * 5);              // w_qkv, b_qkv, cores, w_o, b_o per layer
  // The encoder's layers as the layer functions compute them by hand: multi-linear attention, then the same FFN
  // and norms as the reference's.
  auto& encoder = converted.get<3>();
  const nn::batch b{2, {}, {5, 3}, nn::phase::eval};
  const t3 x = random_tensor3<double>(2 * n, c.width, 1, 9);
  t3 by_hand = x;
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& ref = reference.get<3>()[l];
    const auto layer = nn::make_encoder_params_with<double>(
        ref.config, tprod::identity_transform{}, 1, nn::multilinear_attention_from(ref.attn, n, rank, 2, 17 + 1000 * l));
    auto exact = layer;
    exact.ffn = ref.ffn;
    exact.ln1 = ref.ln1;
    exact.ln2 = ref.ln2;
    by_hand = nn::encoder_layer_forward(exact, by_hand, 2, {false, b.lengths}).first;
  }
  CHECK(max_diff(encoder.forward(x, b), by_hand) <= 1e-13 * (1 + max_abs(by_hand)));
  CHECK(converted.name == reference.name);
}

TEST_CASE("multi-linear attention parameter counts") {
  // Hand counts: d = 8, N = 4, R = 3, P = 2: W_QKV 8·9 = 72, b_QKV 9, superdiagonal cores 2·3 = 6 (full: 2·27 = 54),
  // W_O 16·8 = 128, b_O 8.
  CHECK(nn::multilinear_attention_parameter_count(8, 4, 3, 2, nn::multilinear_core::superdiagonal, true) ==
        72 + 9 + 6 + 128 + 8);
  CHECK(nn::multilinear_attention_parameter_count(8, 4, 3, 2, nn::multilinear_core::full, false, 2) ==
        2 * (72 + 54 + 128));
  CHECK(nn::multihead_attention_parameter_count(8, true) == 4 * 64 + 32);
  for (auto core : {nn::multilinear_core::superdiagonal, nn::multilinear_core::full}) {
    auto a = nn::make_multilinear_attention_params<double>(8, 4, 3, 2, 2, tprod::dct{}, 1, core);
    std::size_t stored = 0;
    a.for_each([&](const std::string&, t3& t) { stored += t.size(); });
    CHECK(stored == nn::multilinear_attention_parameter_count(8, 4, 3, 2, core, true, 2));
  }
  const nn::layer_config cfg = nn::paper000_config(8, 2, 16, 1);
  CHECK(nn::multihead_attention_parameter_count(8, true) == nn::attention_param_count(cfg));
}

TEST_CASE("multi-linear and dimension-wise attention reject what they cannot compute") {
  auto a = nn::make_multilinear_attention_params<double>(4, 3, 2, 1, 1, tprod::identity_transform{}, 1);
  CHECK_THROWS_AS(nn::multilinear_attention_forward(a, random_tensor3<double>(8, 4, 1, 1), 2), tprod::shape_error);
  CHECK_THROWS_AS(nn::multilinear_attention_forward(a, random_tensor3<double>(6, 5, 1, 1), 2), tprod::shape_error);
  CHECK_THROWS_AS(nn::multilinear_attention_forward(a, random_tensor3<double>(6, 4, 1, 1), 2, {false, {4, 1}}),
                  tprod::shape_error);
  CHECK_THROWS_AS(nn::make_multilinear_attention_params<double>(4, 0, 2, 1, 1, tprod::identity_transform{}, 1),
                  tprod::shape_error);
  // N = 128, R = 32 full cores: Φ would be 16384 × 1024 = 2²⁴ · 1 entries — at the bound; R = 33 is beyond it.
  CHECK_THROWS_AS(nn::make_multilinear_attention_params<float>(4, 128, 33, 1, 1, tprod::identity_transform{}, 1,
                                                               nn::multilinear_core::full),
                  tprod::shape_error);
  auto dw = nn::make_attention_params<double>(4, 1, 1, tprod::identity_transform{}, 1, true,
                                              nn::attention_variant::dimension_wise);
  CHECK_THROWS_AS(nn::attention_forward(dw, random_tensor3<double>(6, 4, 1, 1), 2, {true, {}}), tprod::shape_error);
  CHECK_THROWS_AS(
      nn::cross_attention_forward(dw, random_tensor3<double>(6, 4, 1, 1), random_tensor3<double>(8, 4, 1, 1), 2),
      tprod::shape_error);
}
