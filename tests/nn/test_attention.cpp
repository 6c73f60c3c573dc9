// SPDX-License-Identifier: Apache-2.0
// L-multi-head attention (paper 000 Alg. 2) and paper 001's t-Softmax / t-Attention / t-MHSA.
#include <doctest/doctest.h>

#include "nn_test_util.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/t_attention.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::random_tensor3;

namespace {

std::size_t key_len(const nn::attention_mask& m, std::size_t b, std::size_t tk) {
  return m.key_lengths.empty() ? tk : m.key_lengths[b];
}

/// Thm. 19 reference: L⁻¹ of p independent standard attentions (plain loops) on the transformed slices with the
/// transformed weights, for the spectral variant; the literal t-Softmax mixing for the t_softmax variant.
template <class L>
t3 reference(const nn::attention_params<double, L>& prm, const t3& x, const t3* mem, std::size_t batch,
             const nn::attention_mask& mask, const dmat& z) {
  const std::size_t p = prm.slices(), ds = prm.width(), h = prm.heads, dh = ds / h;
  const t3 xh = mode3(x, z), mh = mem ? mode3(*mem, z) : xh;
  const std::size_t tq = x.m() / batch, tk = mh.m() / batch;
  t3 yh(x.m(), ds, p);
  for (std::size_t b = 0; b < batch; ++b) {
    if (prm.variant == nn::attention_variant::spectral) {
      for (std::size_t k = 0; k < p; ++k) {
        const dmat out = naive_mha(sequence(xh, k, b, tq), sequence(mh, k, b, tk), slice(prm.w_qkv.data(), k),
                                   slice(prm.b_qkv.data(), k), slice(prm.w_o.data(), k), slice(prm.b_o.data(), k), h,
                                   mask.causal, key_len(mask, b, tk));
        for (std::size_t t = 0; t < tq; ++t)
          for (std::size_t j = 0; j < ds; ++j) yh(b * tq + t, j, k) = out(Eigen::Index(t), Eigen::Index(j));
      }
      continue;
    }
    // t_softmax: A_l = softmax(Ŝ_l) per slice and head, then slice k uses Σ_l Z_kl A_l.
    std::vector<std::vector<dmat>> probs(p, std::vector<dmat>(h)), vals(p, std::vector<dmat>(h));
    for (std::size_t l = 0; l < p; ++l) {
      const dmat w = slice(prm.w_qkv.data(), l), bias = slice(prm.b_qkv.data(), l);
      auto proj = [&](const dmat& in, std::size_t part) {
        return add_bias(matmul(in, w.middleCols(Eigen::Index(part * ds), Eigen::Index(ds))),
                        bias.rows() ? dmat(bias.middleCols(Eigen::Index(part * ds), Eigen::Index(ds))) : dmat(0, 0));
      };
      const dmat q = proj(sequence(xh, l, b, tq), 0), kk = proj(sequence(mh, l, b, tk), 1),
                 v = proj(sequence(mh, l, b, tk), 2);
      for (std::size_t j = 0; j < h; ++j) {
        dmat a = dmat::Zero(Eigen::Index(tq), Eigen::Index(tk));
        for (std::size_t t = 0; t < tq; ++t) {
          double mx = -1e300, s = 0;
          std::vector<double> e(tk, 0.0);
          for (std::size_t u = 0; u < tk; ++u) {
            if ((mask.causal && u > t) || u >= key_len(mask, b, tk)) continue;
            double acc = 0;
            for (std::size_t c = 0; c < dh; ++c) acc += q(Eigen::Index(t), Eigen::Index(j * dh + c)) * kk(Eigen::Index(u), Eigen::Index(j * dh + c));
            e[u] = acc / std::sqrt(double(dh));
            mx = std::max(mx, e[u]);
          }
          for (std::size_t u = 0; u < tk; ++u) {
            if ((mask.causal && u > t) || u >= key_len(mask, b, tk)) continue;
            s += (e[u] = std::exp(e[u] - mx));
            a(Eigen::Index(t), Eigen::Index(u)) = e[u];
          }
          a.row(Eigen::Index(t)) /= s;
        }
        probs[l][j] = a;
        vals[l][j] = v.middleCols(Eigen::Index(j * dh), Eigen::Index(dh));
      }
    }
    for (std::size_t k = 0; k < p; ++k) {
      dmat hc = dmat::Zero(Eigen::Index(tq), Eigen::Index(ds));
      for (std::size_t j = 0; j < h; ++j) {
        dmat mixed = dmat::Zero(Eigen::Index(tq), Eigen::Index(tk));
        for (std::size_t l = 0; l < p; ++l) mixed += z(Eigen::Index(k), Eigen::Index(l)) * probs[l][j];
        hc.middleCols(Eigen::Index(j * dh), Eigen::Index(dh)) = matmul(mixed, vals[k][j]);
      }
      const dmat out = add_bias(matmul(hc, slice(prm.w_o.data(), k)), slice(prm.b_o.data(), k));
      for (std::size_t t = 0; t < tq; ++t)
        for (std::size_t j = 0; j < ds; ++j) yh(b * tq + t, j, k) = out(Eigen::Index(t), Eigen::Index(j));
    }
  }
  return mode3(yh, z.inverse());
}

template <class L>
void check_against_reference(const L& l, std::size_t p, nn::attention_variant variant, bool cross, bool bias) {
  const std::size_t batch = 2, tq = 4, tk = cross ? 5 : 4, ds = 6, heads = 2;
  auto prm = nn::make_attention_params<double>(ds, heads, p, l, 3, bias, variant);
  const t3 x = random_tensor3<double>(batch * tq, ds, p, 4), mem = random_tensor3<double>(batch * tk, ds, p, 5);
  const dmat z = z_of(l, p);
  for (const auto& mask : {nn::attention_mask{}, nn::attention_mask{true, {}}, nn::attention_mask{false, {tk - 2, tk}},
                           nn::attention_mask{true, {tk, 2}}}) {
    CAPTURE(mask.causal);
    CAPTURE(mask.key_lengths.size());
    const t3 y = cross ? nn::cross_attention_forward(prm, x, mem, batch, mask).first
                       : nn::attention_forward(prm, x, batch, mask).first;
    CHECK(max_diff(y, reference(prm, x, cross ? &mem : nullptr, batch, mask, z)) < 1e-12);
  }
}

template <class L>
void check_attention_gradients(const L& l, std::size_t p, nn::attention_variant variant, bool cross,
                               const nn::attention_mask& mask) {
  const std::size_t batch = 2, tq = 3, tk = cross ? 4 : 3, ds = 4, heads = 2;
  auto prm = nn::make_attention_params<double>(ds, heads, p, l, 7, true, variant);
  t3 x = random_tensor3<double>(batch * tq, ds, p, 8), mem = random_tensor3<double>(batch * tk, ds, p, 9);
  diff_map f;
  f.vars = {&x, &prm.w_qkv.data(), &prm.b_qkv.data(), &prm.w_o.data(), &prm.b_o.data()};
  f.names = {"x", "w_qkv", "b_qkv", "w_o", "b_o"};
  if (cross) {
    f.vars.push_back(&mem);
    f.names.push_back("memory");
  }
  auto run = [&] {
    return cross ? nn::cross_attention_forward(prm, x, mem, batch, mask) : nn::attention_forward(prm, x, batch, mask);
  };
  f.forward = [&] { return run().first; };
  f.backward = [&](const t3& w) {
    auto g = nn::attention_backward(prm, run().second, w);
    std::vector<t3> r{g.d_input, g.d_params.w_qkv.data(), g.d_params.b_qkv.data(), g.d_params.w_o.data(),
                      g.d_params.b_o.data()};
    if (cross) r.push_back(g.d_memory);
    return r;
  };
  check_gradients(f, 31);
}

}  // namespace

TEST_CASE("L-MHA with p = 1 and the identity transform is standard multi-head attention") {
  check_against_reference(tprod::identity_transform{}, 1, nn::attention_variant::spectral, false, true);
  check_against_reference(tprod::identity_transform{}, 1, nn::attention_variant::spectral, true, true);
}

TEST_CASE("Thm. 19: L-MHA is L⁻¹ of p standard attentions on the transformed slices (masks included)") {
  SUBCASE("dct, self") { check_against_reference(tprod::dct{}, 3, nn::attention_variant::spectral, false, true); }
  SUBCASE("dct, cross") { check_against_reference(tprod::dct{}, 3, nn::attention_variant::spectral, true, false); }
  SUBCASE("matrix transform") { check_against_reference(random_transform(2, 3), 2, nn::attention_variant::spectral, false, true); }
}

TEST_CASE("t-MHSA (t_softmax variant) equals the literal Def. 5.2–5.4 computed by plain loops") {
  check_against_reference(tprod::dct{}, 3, nn::attention_variant::t_softmax, false, false);
  check_against_reference(tprod::dct{}, 2, nn::attention_variant::t_softmax, true, true);
  // with p = 1 (Z = [1]) both readings are the same
  auto a = nn::make_attention_params<double>(4, 2, 1, tprod::dct{}, 1, true, nn::attention_variant::spectral);
  auto b = a;
  b.variant = nn::attention_variant::t_softmax;
  const t3 x = random_tensor3<double>(6, 4, 1, 2);
  CHECK(max_diff(nn::attention_forward(a, x, 2).first, nn::attention_forward(b, x, 2).first) < 1e-14);
}

TEST_CASE("masks: causal outputs ignore later tokens; padded keys change nothing for valid queries") {
  const std::size_t batch = 2, len = 5, ds = 4, p = 2;
  auto prm = nn::make_attention_params<double>(ds, 2, p, tprod::dct{}, 2);
  const t3 x = random_tensor3<double>(batch * len, ds, p, 3);
  t3 x2 = x;
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t j = 0; j < ds; ++j) {
      x2(3, j, k) += 1.0;        // token 3 of sequence 0
      x2(len + 4, j, k) -= 2.0;  // token 4 of sequence 1
    }
  SUBCASE("causal") {
    const nn::attention_mask causal{true, {}};
    const t3 y = nn::attention_forward(prm, x, batch, causal).first, y2 = nn::attention_forward(prm, x2, batch, causal).first;
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t j = 0; j < ds; ++j) {
        for (std::size_t t = 0; t < 3; ++t) CHECK(y(t, j, k) == y2(t, j, k));
        for (std::size_t t = 0; t < 4; ++t) CHECK(y(len + t, j, k) == y2(len + t, j, k));
      }
    CHECK(max_diff(y, y2) > 1e-3);  // the later tokens did change
  }
  SUBCASE("key padding") {
    const nn::attention_mask pad{false, {3, 4}};
    const t3 y = nn::attention_forward(prm, x, batch, pad).first, y2 = nn::attention_forward(prm, x2, batch, pad).first;
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t j = 0; j < ds; ++j) {
        for (std::size_t t = 0; t < 3; ++t) CHECK(y(t, j, k) == doctest::Approx(y2(t, j, k)).epsilon(1e-14));
        for (std::size_t t = 0; t < 4; ++t) CHECK(y(len + t, j, k) == doctest::Approx(y2(len + t, j, k)).epsilon(1e-14));
      }
  }
}

TEST_CASE("L-MHA gradients pass finite differences and the adjoint identity") {
  SUBCASE("self, dct, causal + padding") {
    check_attention_gradients(tprod::dct{}, 3, nn::attention_variant::spectral, false, {true, {2, 3}});
  }
  SUBCASE("cross, dct, padding") {
    check_attention_gradients(tprod::dct{}, 2, nn::attention_variant::spectral, true, {false, {3, 4}});
  }
  SUBCASE("self, non-orthogonal transform") {
    check_attention_gradients(random_transform(2, 9), 2, nn::attention_variant::spectral, false, {});
  }
  SUBCASE("t-MHSA, dct, causal") { check_attention_gradients(tprod::dct{}, 3, nn::attention_variant::t_softmax, false, {true, {}}); }
  SUBCASE("t-MHSA cross, non-orthogonal transform") {
    check_attention_gradients(random_transform(3, 4), 3, nn::attention_variant::t_softmax, true, {false, {2, 4}});
  }
}

TEST_CASE("t-Softmax and t-Attention (paper 001, Def. 5.2–5.3)") {
  const tprod::dct l;
  const std::size_t n = 4, c = 3;
  t3 s = random_tensor3<double>(n, n, c, 1);
  SUBCASE("t-Softmax: every slice is a row softmax of the transformed scores") {
    const t3 a = nn::t_softmax(s, l);
    const t3 sh = mode3(s, z_of(l, c));
    for (std::size_t k = 0; k < c; ++k)
      for (std::size_t i = 0; i < n; ++i) {
        double z = 0;
        for (std::size_t j = 0; j < n; ++j) z += std::exp(sh(i, j, k));
        for (std::size_t j = 0; j < n; ++j) CHECK(a(i, j, k) == doctest::Approx(std::exp(sh(i, j, k)) / z).epsilon(1e-13));
      }
    diff_map f;
    f.vars = {&s};
    f.names = {"S"};
    f.forward = [&] { return nn::t_softmax(s, l); };
    f.backward = [&](const t3& w) { return std::vector<t3>{nn::t_softmax_backward(nn::t_softmax(s, l), w, l)}; };
    check_gradients(f, 2);
  }
  SUBCASE("t-Attention: t-Softmax(Q *_L Kᵀ/√d_h) *_L V by plain loops, and gradients") {
    const auto mt = random_transform(c, 2);
    t3 q = random_tensor3<double>(2 * n, 2, c, 3), k = random_tensor3<double>(2 * n, 2, c, 4),
       v = random_tensor3<double>(2 * n, 2, c, 5);
    const auto o = nn::t_attention_forward(q, k, v, 2, mt).first;
    const dmat z = z_of(mt, c);
    for (std::size_t b = 0; b < 2; ++b) {
      t3 qb(n, 2, c), kb(n, 2, c), vb(n, 2, c);
      for (std::size_t kk = 0; kk < c; ++kk) {
        set_slice(qb, kk, sequence(q, kk, b, n));
        set_slice(kb, kk, sequence(k, kk, b, n));
        set_slice(vb, kk, sequence(v, kk, b, n));
      }
      // Def. 5.3 with the library's t-Softmax replaced by the definition: softmax of the slices of L(S)
      t3 sc = l_product(qb, kb, z, false, true) * (1 / std::sqrt(2.0));
      const t3 sh = mode3(sc, z);
      t3 a(n, n, c);
      for (std::size_t kk = 0; kk < c; ++kk)
        for (std::size_t i = 0; i < n; ++i) {
          double zz = 0;
          for (std::size_t j = 0; j < n; ++j) zz += std::exp(sh(i, j, kk));
          for (std::size_t j = 0; j < n; ++j) a(i, j, kk) = std::exp(sh(i, j, kk)) / zz;
        }
      const t3 ref = l_product(a, vb, z);
      for (std::size_t kk = 0; kk < c; ++kk)
        CHECK((sequence(o, kk, b, n) - slice(ref, kk)).cwiseAbs().maxCoeff() < 1e-12);
    }
    diff_map f;
    f.vars = {&q, &k, &v};
    f.names = {"Q", "K", "V"};
    const nn::attention_mask m{true, {}};
    f.forward = [&] { return nn::t_attention_forward(q, k, v, 2, mt, m).first; };
    f.backward = [&](const t3& w) {
      auto g = nn::t_attention_backward(nn::t_attention_forward(q, k, v, 2, mt, m).second, w, mt);
      return std::vector<t3>{g.d_q, g.d_k, g.d_v};
    };
    check_gradients(f, 3);
  }
  SUBCASE("t-MHSA parameters have no biases") {
    auto prm = nn::make_t_mhsa_params<double>(8, 2, 3, l, 1);
    CHECK(!prm.has_bias());
    CHECK(prm.variant == nn::attention_variant::t_softmax);
  }
}

TEST_CASE("attention rejects bad shapes and masks") {
  const tprod::dct l;
  CHECK_THROWS_AS(nn::make_attention_params<double>(6, 4, 2, l, 1), tprod::shape_error);  // 4 ∤ 6
  auto prm = nn::make_attention_params<double>(4, 2, 2, l, 1);
  const t3 x = random_tensor3<double>(6, 4, 2, 1);
  CHECK_THROWS_AS(nn::attention_forward(prm, x, 4), tprod::shape_error);                          // 6 rows, 4 sequences
  CHECK_THROWS_AS(nn::attention_forward(prm, random_tensor3<double>(6, 5, 2, 1), 2), tprod::shape_error);
  CHECK_THROWS_AS(nn::attention_forward(prm, x, 2, {false, {3}}), tprod::shape_error);           // one length for two
  CHECK_THROWS_AS(nn::attention_forward(prm, x, 2, {false, {0, 3}}), tprod::shape_error);        // empty sequence
  CHECK_THROWS_AS(nn::attention_forward(prm, x, 2, {false, {3, 4}}), tprod::shape_error);        // longer than T
  CHECK_THROWS_AS(nn::cross_attention_forward(prm, x, random_tensor3<double>(5, 4, 2, 1), 2), tprod::shape_error);
  const auto saved = nn::attention_forward(prm, x, 2).second;
  CHECK_THROWS_AS(nn::attention_backward(prm, saved, random_tensor3<double>(6, 3, 2, 1)), tprod::shape_error);
  CHECK_THROWS_AS(nn::t_attention_forward(x, random_tensor3<double>(6, 3, 2, 1), x, 2, l), tprod::shape_error);
}
