// SPDX-License-Identifier: Apache-2.0
// Moving a standard attention layer's W^Q, W^K, W^V, W^O to and from tprod::attention_weights: the layout (head j
// is a block of columns of W^Q, W^K, W^V and of rows of W^O), the round trip, and a classifier whose attention
// weights went through the conversion (and through the multi-head Tucker tensorization) computing the same logits;
// compress_attention and laser_attention (TensorLLM and its LASER baseline) on one layer and on chosen layers of a
// stack.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>

#include "nn_test_util.hpp"
#include "tprod/decomp/extern_templates.hpp"
#include "tprod/nn/attention_weights.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model.hpp"

using namespace nn_test;
namespace nn = tprod::nn;
using tprod::identity_transform;

namespace {

/// Standard multi-head attention of one sequence written head by head from the four matrices (plus the layer's
/// biases): head_j = softmax(Q_j K_jᵀ/√d_h) V_j with Q_j = X W^Q(:, j-th block) + b_Q(j-th block), …,
/// Y = [head_1 … head_h] W^O + b_O.
dmat per_head_attention(const dmat& x, const tprod::attention_weights<double>& w, const dmat& b_qkv, const dmat& b_o,
                        std::size_t heads) {
  const Eigen::Index d = w.query.rows(), dh = d / Eigen::Index(heads), t = x.rows();
  dmat concat(t, d);
  for (Eigen::Index j = 0; j < Eigen::Index(heads); ++j) {
    const auto project = [&](const dmat& m, Eigen::Index block) {
      dmat r = x * m.middleCols(j * dh, dh);
      r.rowwise() += b_qkv.block(0, block * d + j * dh, 1, dh).row(0);
      return r;
    };
    const dmat q = project(w.query, 0), k = project(w.key, 1), v = project(w.value, 2);
    dmat s = q * k.transpose() / std::sqrt(double(dh));
    for (Eigen::Index r = 0; r < t; ++r) {
      s.row(r) = (s.row(r).array() - s.row(r).maxCoeff()).exp().matrix();
      s.row(r) /= s.row(r).sum();
    }
    concat.middleCols(j * dh, dh) = s * v;
  }
  dmat y = concat * w.output;
  y.rowwise() += b_o.row(0);
  return y;
}

nn::text_classifier_config small_classifier() {
  nn::text_classifier_config c;
  c.vocabulary = 30;
  c.width = 8;
  c.heads = 2;
  c.hidden = 16;
  c.layers = 2;
  c.dropout = 0.1;  // inactive in evaluation
  c.seed = 5;
  return c;
}

/// A batch of 3 sequences of 6 tokens with 6, 4 and 1 valid tokens, in evaluation mode.
nn::batch eval_batch() {
  nn::batch b;
  b.size = 3;
  b.lengths = {6, 4, 1};
  for (std::size_t i = 0; i < 18; ++i) b.tokens.push_back((7 * i + 3) % 30);
  b.mode = nn::phase::eval;
  return b;
}

template <class Model>
t3 logits(Model& model) {
  return model.forward(t3(), eval_batch());
}

}  // namespace

TEST_CASE("attention_weights_of: head j of W^Q, W^K, W^V, W^O is the layer's head j") {
  const std::size_t d = 8, heads = 2, batch = 2, len = 5;
  const auto prm = nn::make_attention_params<double>(d, heads, 1, identity_transform{}, 31);
  const auto w = nn::attention_weights_of(prm);
  REQUIRE(w.query.rows() == 8);
  REQUIRE(w.output.cols() == 8);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const auto r = Eigen::Index(i), c = Eigen::Index(j);
      CHECK(w.query(r, c) == prm.w_qkv.data()(i, j, 0));
      CHECK(w.key(r, c) == prm.w_qkv.data()(i, d + j, 0));
      CHECK(w.value(r, c) == prm.w_qkv.data()(i, 2 * d + j, 0));
      CHECK(w.output(r, c) == prm.w_o.data()(i, j, 0));
    }
  // The layer's output equals attention written head by head from the four matrices.
  const t3 x = tprod::random_tensor3<double>(batch * len, d, 1, 32);
  const t3 y = nn::attention_forward(prm, x, batch).first;
  const dmat b_qkv = slice(prm.b_qkv.data(), 0), b_o = slice(prm.b_o.data(), 0);
  for (std::size_t b = 0; b < batch; ++b) {
    const dmat expected = per_head_attention(sequence(x, 0, b, len), w, b_qkv, b_o, heads);
    // a few dot products of length d per entry, then a softmax: 100·ε·d is two orders above the rounding
    CHECK((sequence(y, 0, b, len) - expected).cwiseAbs().maxCoeff() <=
          100 * std::numeric_limits<double>::epsilon() * double(d) * (1 + expected.cwiseAbs().maxCoeff()));
  }
}

TEST_CASE("set_attention_weights inverts attention_weights_of and leaves the biases alone") {
  const auto source = nn::make_attention_params<double>(8, 4, 1, identity_transform{}, 41);
  auto target = nn::make_attention_params<double>(8, 4, 1, identity_transform{}, 42);
  const t3 b_qkv = target.b_qkv.data(), b_o = target.b_o.data();
  nn::set_attention_weights(target, nn::attention_weights_of(source));
  CHECK(max_diff(target.w_qkv.data(), source.w_qkv.data()) == 0);
  CHECK(max_diff(target.w_o.data(), source.w_o.data()) == 0);
  CHECK(max_diff(target.b_qkv.data(), b_qkv) == 0);
  CHECK(max_diff(target.b_o.data(), b_o) == 0);
  const auto back = nn::attention_weights_of(target);
  const auto w = nn::attention_weights_of(source);
  CHECK(back.query == w.query);
  CHECK(back.key == w.key);
  CHECK(back.value == w.value);
  CHECK(back.output == w.output);
}

TEST_CASE("a classifier with converted attention weights computes the same logits") {
  auto reference = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  auto model = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  auto& stack = model.get<3>();
  auto& reference_stack = reference.get<3>();
  const t3 expected = logits(reference);
  // Scramble every layer's attention matrices: the logits change ...
  for (std::size_t i = 0; i < stack.size(); ++i) {
    auto w = nn::attention_weights_of(stack[i].attn);
    w.query.swap(w.key);
    w.output.transposeInPlace();
    nn::set_attention_weights(stack[i].attn, w);
  }
  CHECK(max_diff(logits(model), expected) > 1e-3);
  // ... and putting the reference's matrices back restores them bit for bit, also through W_all (eq. 7-8).
  for (std::size_t i = 0; i < stack.size(); ++i) {
    const auto heads = reference_stack[i].attn.heads;
    const auto w_all = tprod::tensorize_heads(nn::attention_weights_of(reference_stack[i].attn), heads);
    nn::set_attention_weights(stack[i].attn, tprod::detensorize_heads(w_all));
  }
  CHECK(max_diff(logits(model), expected) == 0);
  // The multi-head Tucker decomposition at full multilinear ranks (d, d_h, 4) rebuilds the layer to rounding.
  for (std::size_t i = 0; i < stack.size(); ++i) {
    const auto& attn = reference_stack[i].attn;
    const auto r = tprod::multihead_tucker(nn::attention_weights_of(attn), attn.heads,
                                           {.ranks = {attn.width(), attn.head_dim(), 4}});
    nn::set_attention_weights(stack[i].attn, r.weights);
  }
  // weights off by O(ε·d²) relative (HOOI's SVDs and products), propagated through two layers and the head
  const double t = 1000 * std::numeric_limits<double>::epsilon() * 64;
  CHECK(max_diff(logits(model), expected) <= t * (1 + max_abs(expected)));
}

TEST_CASE("the conversion refuses layers that are not standard attention, naming the shapes") {
  auto sliced = nn::make_attention_params<double>(8, 2, 2, identity_transform{}, 51);
  CHECK_THROWS_WITH_AS(nn::attention_weights_of(sliced), doctest::Contains("p = 1"), tprod::shape_error);
  const auto w = nn::attention_weights_of(nn::make_attention_params<double>(8, 2, 1, identity_transform{}, 52));
  CHECK_THROWS_AS(nn::set_attention_weights(sliced, w), tprod::shape_error);
  auto layer = nn::make_attention_params<double>(6, 2, 1, identity_transform{}, 53);
  const t3 before = layer.w_qkv.data();
  CHECK_THROWS_WITH_AS(nn::set_attention_weights(layer, w), doctest::Contains("d = 6"), tprod::shape_error);
  CHECK(max_diff(layer.w_qkv.data(), before) == 0);
}

namespace {

/// ‖a − b‖_F/‖b‖_F, computed here from the definition.
double relative_difference(const dmat& a, const dmat& b) { return (a - b).norm() / b.norm(); }

/// Every parameter of a model, copied, by name.
template <class Model>
std::map<std::string, t3> parameters_of(Model& model) {
  std::map<std::string, t3> values;
  model.for_each_parameter([&](std::string_view name, t3& v, t3&) { values.emplace(std::string(name), v); });
  return values;
}

}  // namespace

TEST_CASE("compress_attention at full ranks rebuilds the four matrices; its ratio and errors are the paper's") {
  const std::size_t d = 8, heads = 2, dh = d / heads;
  const auto original =
      nn::attention_weights_of(nn::make_attention_params<double>(d, heads, 1, identity_transform{}, 61));
  auto w = original;
  const auto full = nn::compress_attention(w, heads, {.ranks = {d, dh, 4}});
  // HOOI's SVDs and three mode products of orthogonal d×d factors: a few ε·d of rounding per entry
  const double t = 10 * std::numeric_limits<double>::epsilon() * double(d);
  CHECK(full.relative_error.query <= t);
  CHECK(full.relative_error.key <= t);
  CHECK(full.relative_error.value <= t);
  CHECK(full.relative_error.output <= t);
  CHECK(relative_difference(w.output, original.output) <= t);
  CHECK(full.ranks == std::vector<std::size_t>{d, dh, 4});
  // CR = 4·d·h·d_v / (R1R2R3·h + d·R1 + d_v·R2 + 4·R3)
  const auto ratio = [&](std::size_t r1, std::size_t r2, std::size_t r3) {
    return double(4 * d * d) / double(r1 * r2 * r3 * heads + d * r1 + dh * r2 + 4 * r3);
  };
  CHECK(full.compression_ratio == doctest::Approx(ratio(d, dh, 4)));

  w = original;
  const auto low = nn::compress_attention(w, heads, {.ranks = {4, 2, 2}});
  CHECK(low.compression_ratio == doctest::Approx(ratio(4, 2, 2)));
  CHECK(low.relative_error.query == doctest::Approx(relative_difference(w.query, original.query)));
  CHECK(low.relative_error.key == doctest::Approx(relative_difference(w.key, original.key)));
  CHECK(low.relative_error.value == doctest::Approx(relative_difference(w.value, original.value)));
  CHECK(low.relative_error.output == doctest::Approx(relative_difference(w.output, original.output)));
  CHECK(low.relative_error.query > 0.1);  // random weights do not compress
  const auto direct = tprod::multihead_tucker(original, heads, {.ranks = {4, 2, 2}});
  CHECK((w.key - direct.weights.key).norm() == 0);
}

TEST_CASE("laser_attention reduces the chosen matrices only, with the Eckart-Young error") {
  const std::size_t d = 8, k = 3;
  const auto original = nn::attention_weights_of(nn::make_attention_params<double>(d, 2, 1, identity_transform{}, 62));
  auto w = original;
  const nn::attention_matrix output_only[] = {nn::attention_matrix::output};
  const auto r = nn::laser_attention(w, k, output_only);
  CHECK(w.query == original.query);
  CHECK(w.value == original.value);
  CHECK(r.relative_error.query == 0);
  CHECK(r.relative_error.key == 0);
  const Eigen::VectorXd sigma = Eigen::JacobiSVD<dmat>(original.output).singularValues();
  CHECK(r.relative_error.output == doctest::Approx(sigma.tail(d - k).norm() / sigma.norm()));
  CHECK(r.relative_error.output == doctest::Approx(relative_difference(w.output, original.output)));
  CHECK(r.compression_ratio == doctest::Approx(double(4 * d * d) / double(3 * d * d + k * 2 * d)));
  CHECK(r.ranks == std::vector<std::size_t>{k});
  w = original;
  CHECK(nn::laser_attention(w, d).relative_error.key <= 10 * std::numeric_limits<double>::epsilon() * double(d));
}

TEST_CASE("compress_attention_matrix: one matrix's heads share two factors (Table IV), the other three stay") {
  const std::size_t d = 8, heads = 2, dh = d / heads, r1 = 3, r2 = 2;
  const auto original =
      nn::attention_weights_of(nn::make_attention_params<double>(d, heads, 1, identity_transform{}, 63));
  // The rank of a matrix: its singular values above a rounding floor.
  const auto rank = [](const dmat& m) {
    const Eigen::VectorXd sigma = Eigen::JacobiSVD<dmat>(m).singularValues();
    return (sigma.array() > 1e-10 * sigma(0)).count();
  };
  for (const auto which : {nn::attention_matrix::query, nn::attention_matrix::output}) {
    const bool output = which == nn::attention_matrix::output;
    CAPTURE(output);
    auto w = original;
    const auto r = nn::compress_attention_matrix(w, heads, which, r1, r2);
    CHECK(w.key == original.key);
    CHECK(w.value == original.value);
    CHECK((output ? w.query == original.query : w.output == original.output));
    // The d×d_v×h tensor of the heads has multilinear ranks (≤ r1, ≤ r2): its mode-0 unfolding [B_1 … B_h] has
    // rank ≤ r1 and its mode-1 unfolding [B_1ᵀ … B_hᵀ] rank ≤ r2.
    const dmat m = output ? dmat(w.output.transpose()) : w.query;
    dmat mode1(dh, d * heads);
    for (std::size_t i = 0; i < heads; ++i)
      mode1.middleCols(Eigen::Index(i * d), Eigen::Index(d)) =
          m.middleCols(Eigen::Index(i * dh), Eigen::Index(dh)).transpose();
    CHECK(rank(m) <= Eigen::Index(r1));
    CHECK(rank(mode1) <= Eigen::Index(r2));
    const double error = output ? r.relative_error.output : r.relative_error.query;
    const dmat& before = output ? original.output : original.query;
    CHECK(error == doctest::Approx(relative_difference(output ? w.output : w.query, before)));
    CHECK(error > 0.1);  // random weights do not compress
    CHECK((output ? r.relative_error.query : r.relative_error.output) == 0);
    // CR = 4·d² / (3·d² + core R1·R2·h + factors d·R1 + d_v·R2)
    const std::size_t stored = 3 * d * d + r1 * r2 * heads + d * r1 + dh * r2;
    CHECK(r.compression_ratio == doctest::Approx(double(4 * d * d) / double(stored)));
    CHECK(r.ranks == std::vector<std::size_t>{r1, r2});
  }
  auto w = original;
  const auto full = nn::compress_attention_matrix(w, heads, nn::attention_matrix::value, d, dh);
  CHECK(full.relative_error.value <= 10 * std::numeric_limits<double>::epsilon() * double(d));
  CHECK_THROWS_WITH_AS(nn::compress_attention_matrix(w, 3, nn::attention_matrix::key, 2, 2),
                       doctest::Contains("3 heads do not split a 8x8 matrix"), tprod::shape_error);
  w = original;
  CHECK_THROWS_AS(nn::compress_attention_matrix(w, heads, nn::attention_matrix::key, 2, dh + 1), tprod::shape_error);
  CHECK(w.key == original.key);

  auto model = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  const auto before = parameters_of(model);
  const std::vector<std::size_t> chosen{1};
  REQUIRE(nn::compress_attention_matrix(model.get<3>(), chosen, nn::attention_matrix::output, 2, 1).size() == 1);
  const auto after = parameters_of(model);
  for (const auto& entry : before) {
    const std::string& name = entry.first;
    CAPTURE(name);
    CHECK((max_diff(after.at(name), entry.second) == 0) != (name == "encoder.1.attn.w_o"));
  }
}

TEST_CASE("compress_attention on a stack changes the chosen layers' W_QKV and W_O and nothing else") {
  auto model = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  auto& stack = model.get<3>();
  const auto before = parameters_of(model);
  const auto layer1 = nn::attention_weights_of(stack[1].attn);
  const std::vector<std::size_t> chosen{1};
  const auto results = nn::compress_attention(stack, chosen, {.ranks = {4, 2, 2}});
  REQUIRE(results.size() == 1);
  CHECK(results[0].layer == 1);
  const auto after = parameters_of(model);
  for (const auto& entry : before) {
    const std::string& name = entry.first;  // not a binding: CAPTURE's lambda needs a variable
    const auto& value = entry.second;
    CAPTURE(name);
    const bool chosen_matrix = name == "encoder.1.attn.w_qkv" || name == "encoder.1.attn.w_o";
    CHECK((max_diff(after.at(name), value) == 0) != chosen_matrix);
  }
  const auto expected = tprod::multihead_tucker(layer1, stack[1].attn.heads, {.ranks = {4, 2, 2}}).weights;
  CHECK((nn::attention_weights_of(stack[1].attn).value - expected.value).norm() == 0);
  CHECK(results[0].relative_error.value == doctest::Approx(relative_difference(expected.value, layer1.value)));

  const auto laser = nn::laser_attention(stack, {}, 2);  // every layer
  REQUIRE(laser.size() == 2);
  CHECK(laser[0].layer == 0);
  CHECK(laser[1].layer == 1);
}

TEST_CASE("compress_attention refuses bad layers, ranks and head counts, leaving the weights unchanged") {
  auto model = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  auto& stack = model.get<3>();
  const auto before = parameters_of(model);
  const auto unchanged = [&] {
    for (const auto& [name, value] : parameters_of(model)) CHECK(max_diff(value, before.at(name)) == 0);
  };
  const std::vector<std::size_t> missing{0, 2}, repeated{1, 1}, both{0, 1};
  CHECK_THROWS_WITH_AS(nn::compress_attention(stack, missing, {.ranks = {4, 2, 2}}),
                       doctest::Contains("layer 2 does not exist"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::compress_attention(stack, repeated, {.ranks = {4, 2, 2}}),
                       doctest::Contains("listed twice"), tprod::shape_error);
  // layer 0 would succeed, layer 1 too: a rank beyond d_v = 4 fails in the first, nothing is written
  CHECK_THROWS_AS(nn::compress_attention(stack, both, {.ranks = {4, 5, 2}}), tprod::shape_error);
  CHECK_THROWS_AS(nn::laser_attention(stack, both, 9), tprod::shape_error);
  unchanged();
  auto w = nn::attention_weights_of(stack[0].attn);
  CHECK_THROWS_WITH_AS(nn::compress_attention(w, 3, {.ranks = {4, 2, 2}}), doctest::Contains("3 heads do not split"),
                       tprod::shape_error);
  CHECK(w.query == nn::attention_weights_of(stack[0].attn).query);
  auto sliced = nn::make_text_classifier<double>([] {
    auto c = small_classifier();
    c.slices = 2;
    return c;
  }(), identity_transform{});
  CHECK_THROWS_WITH_AS(nn::compress_attention(sliced.get<3>(), {}, {.ranks = {2, 1, 1}}), doctest::Contains("p = 1"),
                       tprod::shape_error);
}

TEST_CASE("laser_ffn reduces the chosen layers' chosen FFN matrices, with the Eckart-Young error (Remark 3)") {
  auto model = nn::make_text_classifier<double>(small_classifier(), identity_transform{});
  auto& stack = model.get<3>();
  const auto before = parameters_of(model);
  const std::size_t d = 8, d_ff = 16, k = 3;
  const dmat w1 = before.at("encoder.1.ffn.w1").slice(0), w2 = before.at("encoder.1.ffn.w2").slice(0);
  const std::vector<std::size_t> chosen{1};
  const nn::ffn_matrix input_only[] = {nn::ffn_matrix::input};
  const auto r = nn::laser_ffn(stack, chosen, k, input_only);
  REQUIRE(r.size() == 1);
  CHECK(r[0].layer == 1);
  CHECK(r[0].rank == k);
  // Only encoder.1.ffn.w1 changed, to the best rank-k approximation: its error from the singular values alone.
  for (const auto& [name, value] : parameters_of(model)) {
    CAPTURE(name);
    CHECK((max_diff(value, before.at(name)) == 0) != (name == "encoder.1.ffn.w1"));
  }
  const dmat reduced = stack[1].ffn.w1.data().slice(0);
  const Eigen::VectorXd sigma = Eigen::JacobiSVD<dmat>(w1).singularValues();
  CHECK(r[0].input_error == doctest::Approx(sigma.tail(d - k).norm() / sigma.norm()));
  CHECK(r[0].input_error == doctest::Approx(relative_difference(reduced, w1)));
  CHECK(Eigen::JacobiSVD<dmat>(reduced).singularValues()(Eigen::Index(k)) <= 1e-12 * sigma(0));
  CHECK(r[0].output_error == 0);
  CHECK(r[0].compression_ratio == doctest::Approx(double(2 * d * d_ff) / double(d * d_ff + k * (d + d_ff))));
  // Both matrices of every layer; at full rank they come back unchanged.
  const auto all = nn::laser_ffn(stack, {}, d);
  REQUIRE(all.size() == 2);
  CHECK(all[0].input_error <= 1e-13);
  CHECK((dmat(stack[0].ffn.w2.data().slice(0)) - dmat(before.at("encoder.0.ffn.w2").slice(0))).norm() <=
        1e-13 * w2.norm());
  // Refusals leave the stack as it was: a rank beyond min(d, d_ff), a missing layer, an L-product layer.
  const auto now = parameters_of(model);
  const std::vector<std::size_t> missing{0, 2};
  CHECK_THROWS_AS(nn::laser_ffn(stack, {}, d + 1), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::laser_ffn(stack, missing, k), doctest::Contains("layer 2 does not exist"),
                       tprod::shape_error);
  for (const auto& [name, value] : parameters_of(model)) CHECK(max_diff(value, now.at(name)) == 0);
  auto sliced = nn::make_text_classifier<double>(
      [] {
        auto c = small_classifier();
        c.slices = 2;
        return c;
      }(),
      identity_transform{});
  CHECK_THROWS_WITH_AS(nn::laser_ffn(sliced.get<3>(), {}, 2), doctest::Contains("L-product layer (p = 2)"),
                       tprod::shape_error);
}
