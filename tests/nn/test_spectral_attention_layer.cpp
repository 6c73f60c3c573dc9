// SPDX-License-Identifier: Apache-2.0
// The stateful TSA layer (nn/model/spectral_attention_layer.hpp), the attention-only layer
// (nn/model/attention_layer.hpp) and paper 002's additive attention (nn/model/additive_attention_layer.hpp): the
// same output as the stateless functions or a plain loop, gradients through the layer's tensor3 parameters (finite
// differences and the adjoint identity, so the copies between the tensor3 mirrors and the MPO cores are checked both
// ways), accumulation over backward passes, names, and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "nn_test_util.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/attention_layer.hpp"
#include "tprod/nn/model/spectral_attention_layer.hpp"
#include "tprod/nn/model/additive_attention_layer.hpp"

using namespace nn_test;
namespace nn = tprod::nn;

namespace {

constexpr std::size_t steps = 5, batch_size = 2;

/// Variables x and every parameter of a layer; forward and backward through the layer (gradients zeroed first,
/// so backward returns the fresh gradients of one pass).
template <class Layer>
diff_map layer_diff_map(Layer& layer, t3& x, const nn::batch& b) {
  diff_map f;
  f.vars = {&x};
  f.names = {"x"};
  std::vector<t3*> grads;
  layer.for_each_parameter([&](std::string_view name, t3& v, t3& g) {
    f.vars.push_back(&v);
    f.names.emplace_back(name);
    grads.push_back(&g);
  });
  f.forward = [&layer, &x, b] { return layer.forward(x, b); };
  f.backward = [&layer, &x, b, grads](const t3& w) {
    for (auto* g : grads) g->elements().setZero();
    layer.forward(x, b);
    std::vector<t3> out{layer.backward(w)};
    for (auto* g : grads) out.push_back(*g);
    return out;
  };
  return f;
}

nn::spectral_attention_layer<double> small_tsa(std::size_t filter_order) {
  auto prm = nn::make_tsa_params<double>({2, 2, 2}, {2, 2, 2}, 2, 2, filter_order, 81);
  for (auto& h : prm.heads)
    for (std::size_t k = 0; k < h.alpha.size(); ++k) h.alpha.data()[k] = 0.7 - 0.3 * double(k);
  return nn::spectral_attention_layer<double>(std::move(prm), 0.8);
}

}  // namespace

TEST_CASE("TSA layer: the output of tsa_forward, parameters named by head and core, cores as tensor3") {
  auto layer = small_tsa(3);
  const t3 x = 2 * tprod::random_tensor3<double>(batch_size * steps, 8, 1, 82);
  const nn::batch b{batch_size, {}, {5, 3}, nn::phase::train};
  const t3 y = layer.forward(x, b);
  const auto omega = tprod::bidirectional_time_adjacency<double>(steps, 0.8);
  const dmat ref = nn::tsa_forward<double>(layer.params(), x.slice(0), omega, b.lengths).first;
  REQUIRE(y.m() == batch_size * steps);
  REQUIRE(y.n() == 8);
  REQUIRE(y.p() == 1);
  CHECK((dmat(y.slice(0)) - ref).cwiseAbs().maxCoeff() == 0.0);

  std::vector<std::string> names;
  std::size_t count = 0;
  layer.for_each_parameter([&](std::string_view name, t3& v, t3& g) {
    names.emplace_back(name);
    count += v.size();
    CHECK(g.size() == v.size());
  });
  CHECK(count == layer.parameter_count());
  CHECK(names.front() == "tsa.head_0.key.core_0");
  CHECK(std::find(names.begin(), names.end(), "tsa.head_1.alpha") != names.end());
  CHECK(names.back() == "tsa.projection.core_3");
  // a core R_{n-1}×I_n×J_n×R_n is held as (R_{n-1}·I_n)×J_n×R_n with the same column-major entries
  layer.for_each_parameter([&](std::string_view name, t3& v, t3&) {
    if (name == "tsa.head_0.value.core_1") {
      const auto& core = layer.params().heads[0].value.weight.cores[1];
      CHECK(v.m() == 4);
      CHECK(v.n() == 2);
      CHECK(v.p() == 2);
      CHECK(std::equal(v.data(), v.data() + v.size(), core.data()));
    }
  });
}

TEST_CASE("TSA layer gradients through its tensor3 parameters (simplified and polynomial filters, padding)") {
  for (const std::size_t order : {std::size_t(0), std::size_t(3)}) {
    CAPTURE(order);
    auto layer = small_tsa(order);
    // inputs scaled up so that the scores spread over both signs of ReLU
    t3 x = 3 * tprod::random_tensor3<double>(batch_size * steps, 8, 1, 83);
    const nn::batch b{batch_size, {}, {5, 4}, nn::phase::train};
    auto f = layer_diff_map(layer, x, b);
    check_gradients(f, 84);
  }
}

TEST_CASE("TSA layer: backward passes add their gradients; an optimizer's update reaches the cores") {
  auto layer = small_tsa(2);
  const t3 x = tprod::random_tensor3<double>(batch_size * steps, 8, 1, 85);
  const t3 dy = tprod::random_tensor3<double>(batch_size * steps, 8, 1, 86);
  const nn::batch b{batch_size, {}, {}, nn::phase::train};
  auto params = nn::parameters<double>(layer);
  params.zero_grad();
  layer.forward(x, b);
  layer.backward(dy);
  std::vector<t3> once;
  for (auto* g : params.grads.tensors) once.push_back(*g);
  layer.forward(x, b);
  layer.backward(dy);
  // the second pass adds the same numbers (up to the summation order of a threaded GEMM): g + g = 2g
  for (std::size_t i = 0; i < once.size(); ++i)
    CHECK(max_diff(*params.grads.tensors[i], t3(2.0 * once[i])) <=
          64 * std::numeric_limits<double>::epsilon() * (1 + max_abs(once[i])));

  // the optimizer writes the tensor3 values; the next forward pass uses them
  params.values.tensors[0]->elements().setZero();
  CHECK(tprod::detail::elements(layer.params().heads[0].key.weight.cores[0]).isZero());
}

TEST_CASE("TSA layer in a sequential model: embedding, positions, TSA, pooling, head train end to end") {
  using model_t = nn::sequential<double, nn::token_embedding<double>,
                                 nn::positional_layer<double, nn::sinusoidal_positional_params<double>>,
                                 nn::spectral_attention_layer<double>, nn::pooling_layer<double>,
                                 nn::flatten_layer<double>, nn::linear_layer<double, tprod::identity_transform>>;
  static_assert(nn::layer<model_t, double>);
  model_t model(nn::token_embedding<double>(nn::make_embedding_params<double>(30, 8, 87), 1),
                nn::positional_layer<double, nn::sinusoidal_positional_params<double>>(
                    nn::make_sinusoidal_positional<double>(1, nn::alpha_strategy::standard)),
                nn::spectral_attention_layer<double>(nn::make_qtt_tsa_params<double>(8, 2, 0, 88), 0.9),
                nn::pooling_layer<double>(nn::pooling::mean), nn::flatten_layer<double>{},
                nn::linear_layer<double, tprod::identity_transform>(
                    nn::make_linear_params<double>(8, 2, 1, tprod::identity_transform{}, 89), "head"));
  auto params = nn::parameters<double>(model);
  CHECK(params.count() == 30 * 8 + model.get<2>().parameter_count() + 8 * 2 + 2);
  nn::adamw<double> opt({1e-2, 0.9, 0.999, 1e-8, 0.0});
  nn::batch b{batch_size, {2, 3, 4, 5, 0, 7, 8, 9, 0, 0}, {4, 3}, nn::phase::train};
  const std::vector<std::size_t> labels{0, 1};
  const tprod::tensor3<double> none;
  params.zero_grad();
  const double first = nn::classification_step(model, none, b, labels).loss;
  for (int i = 0; i < 30; ++i) {
    nn::step(opt, params);
    params.zero_grad();
    nn::classification_step(model, none, b, labels);
  }
  CHECK(nn::classification_step(model, none, b, labels).loss < first);
}

TEST_CASE("attention-only layer: the output and gradients of attention_forward / attention_backward") {
  nn::attention_layer<double, tprod::identity_transform> layer(
      nn::make_attention_params<double>(4, 2, 1, tprod::identity_transform{}, 90));
  t3 x = tprod::random_tensor3<double>(batch_size * steps, 4, 1, 91);
  const nn::batch b{batch_size, {}, {5, 2}, nn::phase::train};
  const t3 ref = nn::attention_forward(layer.params.value, x, batch_size, nn::attention_mask{false, b.lengths}).first;
  CHECK(max_diff(layer.forward(x, b), ref) == 0.0);
  auto f = layer_diff_map(layer, x, b);
  check_gradients(f, 92);
}

TEST_CASE("TSA layer refuses a bad damping, input width, slice count or batch, naming them") {
  CHECK_THROWS_WITH_AS(nn::spectral_attention_layer<double>(nn::make_qtt_tsa_params<double>(8, 1, 0, 1), 1.0),
                       doctest::Contains("damping"), tprod::shape_error);
  auto layer = small_tsa(0);
  const nn::batch b{batch_size, {}, {}, nn::phase::train};
  CHECK_THROWS_WITH_AS(layer.forward(t3(batch_size * steps, 4, 1), b), doctest::Contains("x8x1"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(layer.forward(t3(batch_size * steps, 8, 2), b), doctest::Contains("p = 1"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(layer.forward(t3(9, 8, 1), b), doctest::Contains("whole sequences"), tprod::shape_error);
  const nn::batch bad_lengths{batch_size, {}, {5, 0}, nn::phase::train};
  CHECK_THROWS_AS(layer.forward(t3(batch_size * steps, 8, 1), bad_lengths), tprod::shape_error);
}

namespace {

/// Additive attention of every sequence and head written as loops: s_ij = Σ_c v_c tanh(q_ic + k_jc) over the
/// valid keys, softmax, weighted values, output projection.
dmat naive_additive_attention(const dmat& x, const nn::additive_attention_params<double>& p,
                              const std::vector<std::size_t>& lengths, std::size_t steps) {
  const auto d = Eigen::Index(p.width()), dh = d / Eigen::Index(p.heads);
  dmat qkv = x * dmat(p.w_qkv.slice(0));
  qkv.rowwise() += dmat(p.b_qkv.slice(0)).row(0);
  dmat o = dmat::Zero(x.rows(), d);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (Eigen::Index h = 0; h < Eigen::Index(p.heads); ++h)
      for (std::size_t i = 0; i < steps; ++i) {
        const Eigen::Index row = Eigen::Index(b * steps + i);
        std::vector<double> s(lengths[b]);
        double top = -1e300, total = 0;
        for (std::size_t j = 0; j < lengths[b]; ++j) {
          const Eigen::Index key = Eigen::Index(b * steps + j);
          s[j] = 0;
          for (Eigen::Index c = 0; c < dh; ++c)
            s[j] += p.score(0, std::size_t(h * dh + c), 0) * std::tanh(qkv(row, h * dh + c) + qkv(key, d + h * dh + c));
          top = std::max(top, s[j]);
        }
        for (auto& e : s) total += (e = std::exp(e - top));
        for (std::size_t j = 0; j < lengths[b]; ++j)
          for (Eigen::Index c = 0; c < dh; ++c)
            o(row, h * dh + c) += s[j] / total * qkv(Eigen::Index(b * steps + j), 2 * d + h * dh + c);
      }
  dmat y = o * dmat(p.w_o.slice(0));
  y.rowwise() += dmat(p.b_o.slice(0)).row(0);
  return y;
}

}  // namespace

TEST_CASE("additive attention layer: the per-head loop's output, padding keys unseen, 4d² + 5d named parameters") {
  const std::size_t d = 8, heads = 2;
  nn::additive_attention_layer<double> layer(nn::make_additive_attention_params<double>(d, heads, 91));
  t3 x = tprod::random_tensor3<double>(batch_size * steps, d, 1, 92);
  const nn::batch b{batch_size, {}, {5, 3}, nn::phase::train};
  const t3 y = layer.forward(x, b);
  const dmat ref = naive_additive_attention(x.slice(0), layer.params(), b.lengths, steps);
  CHECK((dmat(y.slice(0)) - ref).cwiseAbs().maxCoeff() <= 1e-13 * ref.cwiseAbs().maxCoeff());
  // Sequence 1's padding (rows 8 and 9) changes only those rows' own outputs: no valid row attends to it.
  for (Eigen::Index c = 0; c < Eigen::Index(d); ++c) x(8, std::size_t(c), 0) += 3, x(9, std::size_t(c), 0) -= 2;
  const t3 y2 = layer.forward(x, b);
  CHECK((dmat(y2.slice(0)).topRows(8) - dmat(y.slice(0)).topRows(8)).cwiseAbs().maxCoeff() == 0.0);
  std::vector<std::string> names;
  std::size_t count = 0;
  layer.for_each_parameter([&](std::string_view name, t3& v, t3&) {
    names.emplace_back(name);
    count += v.size();
  });
  CHECK(names == std::vector<std::string>{"ada.w_qkv", "ada.b_qkv", "ada.score", "ada.w_o", "ada.b_o"});
  CHECK(count == 4 * d * d + 5 * d);
}

TEST_CASE("additive attention layer: gradients of the input and every parameter equal finite differences") {
  nn::additive_attention_layer<double> layer(nn::make_additive_attention_params<double>(8, 2, 93));
  t3 x = tprod::random_tensor3<double>(batch_size * steps, 8, 1, 94);
  auto f = layer_diff_map(layer, x, nn::batch{batch_size, {}, {4, 5}, nn::phase::train});
  check_gradients(f, 95);
  // Two backward passes accumulate.
  std::vector<t3*> grads;
  layer.for_each_parameter([&](std::string_view, t3&, t3& g) { grads.push_back(&g); });
  const t3 w = tprod::random_tensor3<double>(batch_size * steps, 8, 1, 96);
  for (auto* g : grads) g->elements().setZero();
  layer.forward(x, nn::batch{batch_size, {}, {4, 5}, nn::phase::train});
  layer.backward(w);
  const t3 once = *grads[2];
  layer.backward(w);
  CHECK(max_diff(*grads[2], 2.0 * once) <= 1e-14 * max_abs(once));
}

TEST_CASE("additive attention layer: shapes it cannot take are refused, naming them") {
  CHECK_THROWS_WITH_AS(nn::make_additive_attention_params<double>(8, 3, 1), doctest::Contains("3 heads"),
                       tprod::shape_error);
  nn::additive_attention_layer<double> layer(nn::make_additive_attention_params<double>(8, 2, 1));
  const t3 x = tprod::random_tensor3<double>(10, 6, 1, 2);
  CHECK_THROWS_WITH_AS(layer.forward(x, nn::batch{2, {}, {5, 5}}), doctest::Contains("10x6x1"), tprod::shape_error);
  const t3 ok = tprod::random_tensor3<double>(10, 8, 1, 2);
  CHECK_THROWS_WITH_AS(layer.forward(ok, nn::batch{3, {}, {}}), doctest::Contains("whole sequences"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(layer.forward(ok, nn::batch{2, {}, {5, 0}}), doctest::Contains("sequence 1 has no valid"),
                       tprod::shape_error);
}

TEST_CASE("paper 002's classifier around each attention: the layers in order, logits per sequence, learning") {
  const nn::attention_classifier_config c{11, 8, 5, 3, 0.0, 0.5, 7};
  nn::batch b{2, {}, {5, 3}, nn::phase::train};
  for (std::size_t i = 0; i < 10; ++i) b.tokens.push_back((i * 5 + 2) % 11);
  const auto check = [&](auto attention, const std::string& first_attention_parameter) {
    auto model = nn::make_attention_classifier<double>(std::move(attention), c);
    auto params = nn::parameters<double>(model);
    REQUIRE(params.size() > 6);
    CHECK(params.values.names.front() == "embed.table");
    CHECK(std::find(params.values.names.begin(), params.values.names.end(), first_attention_parameter) !=
          params.values.names.end());
    CHECK(params.values.names.back() == "head.bias");
    const auto& logits = model.forward(t3(), b);
    CHECK(logits.extents() == tprod::dextents3(2, 3, 1));
    // a few plain gradient steps on one batch lower its loss
    nn::adamw<double> opt({1e-2, 0.9, 0.999, 1e-8, 0.0});
    const double first = nn::classification_step(model, t3(), b, {2, 0}).loss;
    for (int s = 0; s < 20; ++s) {
      nn::step(opt, params);
      params.zero_grad();
      nn::classification_step(model, t3(), b, {2, 0});
    }
    CHECK(nn::classification_step(model, t3(), b, {2, 0}).loss < first);
  };
  check(nn::spectral_attention_layer<double>(nn::make_qtt_tsa_params<double>(8, 2, 0, 1), 0.9), "tsa.head_0.key.core_0");
  check(nn::attention_layer<double, tprod::identity_transform>(
            nn::make_attention_params<double>(8, 2, 1, tprod::identity_transform{}, 2)),
        "attn.w_qkv");
  check(nn::additive_attention_layer<double>(nn::make_additive_attention_params<double>(8, 2, 3)), "ada.score");
  const nn::attention_classifier_config one_class{11, 8, 5, 1, 0.0, 0.5, 7};
  CHECK_THROWS_WITH_AS(nn::make_attention_classifier<double>(
                           nn::additive_attention_layer<double>(nn::make_additive_attention_params<double>(8, 2, 3)),
                           one_class),
                       doctest::Contains("at least 2 classes"), tprod::shape_error);
}
