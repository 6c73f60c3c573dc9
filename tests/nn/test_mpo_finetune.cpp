// SPDX-License-Identifier: Apache-2.0
// MPO over-parameterized fine-tuning (nn/model/mpo_finetune.hpp): the exact MPO of a model's weight matrices (merged
// weights, unchanged outputs at step 0), core gradients against finite differences, the importance score I_W by
// hand, the factorization rule, module groups, static and dynamic selection, errors.
#include <doctest/doctest.h>

#include "model_test_util.hpp"
#include "mpo_test_util.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"

namespace nn = tprod::nn;
using nn_test::small_text_batch;
using nn_test::small_text_config;

namespace {

/// The standard (p = 1, identity transform) version of the tests' small text classifier.
template <class T>
nn::text_classifier<T, tprod::identity_transform> standard_model() {
  auto c = small_text_config();
  c.slices = 1;
  c.hidden = 12;  // 8×12: a factorization (2, 2, 2) × (3, 2, 2) with unequal sides
  return nn::make_text_classifier<T>(c, tprod::identity_transform{});
}

const std::vector<std::string> chosen{"encoder.0.attn.w_qkv", "encoder.1.ffn.w1", "head.weight"};

}  // namespace

TEST_CASE_TEMPLATE("MPO over-parameterization is exact: merged W = product of the cores = W, same outputs", T, float,
                   double) {
  auto model = standard_model<T>();
  const tprod::tensor3<T> none;
  const tprod::tensor3<T> dense_out = model.forward(none, small_text_batch(nn::phase::eval));
  std::vector<tprod::tensor3<T>> before;
  for (const auto& n : chosen) before.push_back(*nn::detail::find_parameter<T>(model, n, "test").first);
  const std::size_t dense_count = nn::parameters<T>(model).count();

  nn::mpo_overparameterized<T, decltype(model)> over(model);
  for (const auto& n : chosen) over.over_parameterize(n);
  const tprod::tensor3<T> out = over.forward(none, small_text_batch(nn::phase::eval));
  // TT-SVD and the merge round O(I + J) times per entry of a unit-size W (8×24 at most).
  const double scale = std::max(1.0, double(dense_out.elements().cwiseAbs().maxCoeff()));
  CHECK(double((out.elements() - dense_out.elements()).cwiseAbs().maxCoeff()) <= mpo_test::tol<T>(400) * scale);
  std::size_t matrices = 0;
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    CAPTURE(chosen[k]);
    const auto& w = *nn::detail::find_parameter<T>(model, chosen[k], "test").first;
    const double ws = std::max(1.0, double(before[k].elements().cwiseAbs().maxCoeff()));
    const mpo_test::dmat product = mpo_test::reference_full(over.weight(chosen[k]));
    CHECK(mpo_test::max_abs_diff(product, w.slice(0).template cast<double>()) <= mpo_test::tol<T>(60) * ws);
    CHECK(double((w.elements() - before[k].elements()).cwiseAbs().maxCoeff()) <= mpo_test::tol<T>(60) * ws);
    matrices += w.size();
  }
  // The parameters: the model's without the chosen matrices, plus the cores (more than the matrices they replace).
  CHECK(over.core_parameter_count() > matrices);
  CHECK(nn::parameters<T>(over).count() == dense_count - matrices + over.core_parameter_count());
  CHECK(over.over_parameterized() == chosen);
  CHECK(over.weight("encoder.1.ffn.w1").row_dims() == tprod::nd_shape{2, 2, 2});
  CHECK(over.weight("encoder.1.ffn.w1").col_dims() == tprod::nd_shape{3, 2, 2});
}

TEST_CASE("MPO over-parameterization: core gradients (and the rest of the model's) equal finite differences") {
  auto model = standard_model<double>();
  nn::mpo_overparameterized<double, decltype(model)> over(model);
  over.over_parameterize("encoder.0.attn.w_qkv");
  over.over_parameterize("encoder.1.ffn.w1", nn::mpo_factorization{{4, 2}, {2, 6}});
  auto f = nn_test::model_map(over, small_text_batch(), nullptr);
  nn_test::check_gradients(f, 31);
  // The model's gradients of the over-parameterized matrices are consumed (cleared) by the cores' backward.
  CHECK(nn::detail::find_parameter<double>(model, "encoder.1.ffn.w1", "test").second->elements().squaredNorm() == 0);
}

TEST_CASE("importance I_W = Σ_b Σ_ij |w_ij ∂L_b/∂w_ij|, by hand on a 2×2 layer over two batches") {
  tprod::tensor3<double> w(2, 2, 1);
  w.slice(0) << 1, -2, 3, 0.5;
  nn::linear_layer<double, tprod::identity_transform> layer(
      {tprod::transformed<double, tprod::identity_transform>(tprod::dextents3(2, 2, 1), {}, std::move(w)),
       tprod::transformed<double, tprod::identity_transform>(tprod::dextents3(1, 2, 1), {})},
      "head");
  nn::importance_meter<double> meter(layer, {"head.weight"});
  auto params = nn::parameters<double>(layer);
  const auto run = [&](std::initializer_list<double> x, std::initializer_list<double> dy) {
    tprod::tensor3<double> xt(1, 2, 1), dyt(1, 2, 1);
    std::copy(x.begin(), x.end(), xt.data());
    std::copy(dy.begin(), dy.end(), dyt.data());
    params.zero_grad();
    layer.forward(xt, nn::batch{1, {}, {}, nn::phase::train});
    layer.backward(dyt);  // ∂L/∂W = xᵀ·dy
    meter.accumulate();
  };
  run({1, 2}, {1, -1});  // ∂L/∂W = [1 −1; 2 −2]: |1·1| + |−2·−1| + |3·2| + |0.5·−2| = 10
  CHECK(meter.scores().at("head.weight") == doctest::Approx(10).epsilon(1e-14));
  run({0, 1}, {2, 0});  // ∂L/∂W = [0 0; 2 0]: |3·2| = 6
  CHECK(meter.scores().at("head.weight") == doctest::Approx(16).epsilon(1e-14));
  meter.reset();
  CHECK(meter.scores().at("head.weight") == 0);
}

TEST_CASE("factorization rule, module groups, static and dynamic top-N selection") {
  CHECK(nn::balanced_factors(64, 3) == tprod::nd_shape{4, 4, 4});
  CHECK(nn::balanced_factors(192, 3) == tprod::nd_shape{6, 8, 4});
  CHECK(nn::balanced_factors(2, 3) == tprod::nd_shape{2, 1, 1});
  CHECK(nn::balanced_factors(1, 2) == tprod::nd_shape{1, 1});
  CHECK(nn::balanced_factors(97, 1) == tprod::nd_shape{97});
  CHECK(nn::module_group("encoder.12.ffn.w1") == "encoder.*.ffn.w1");
  CHECK(nn::module_group("head.weight") == "head.weight");

  const std::map<std::string, double> scores{{"encoder.0.attn.w_qkv", 1},   {"encoder.1.attn.w_qkv", 3},
                                             {"encoder.2.attn.w_qkv", 2},   {"encoder.0.ffn.w1", 5},
                                             {"encoder.1.ffn.w1", 2},       {"head.weight", 0.5}};
  const auto sorted = [](std::vector<std::string> v) { return std::set<std::string>(v.begin(), v.end()); };
  CHECK(sorted(nn::select_top(scores, 1)) ==
        std::set<std::string>{"encoder.1.attn.w_qkv", "encoder.0.ffn.w1", "head.weight"});
  CHECK(sorted(nn::select_top(scores, 2)) == std::set<std::string>{"encoder.1.attn.w_qkv", "encoder.2.attn.w_qkv",
                                                                   "encoder.0.ffn.w1", "encoder.1.ffn.w1",
                                                                   "head.weight"});
  // Dynamic: N = 2 per group, n = 1 at a time; the attention group already has encoder.1, the head group is full.
  CHECK(sorted(nn::select_next(scores, {"encoder.1.attn.w_qkv", "head.weight"}, 2, 1)) ==
        std::set<std::string>{"encoder.2.attn.w_qkv", "encoder.0.ffn.w1"});
  CHECK(nn::select_next(scores, {"encoder.1.attn.w_qkv", "encoder.2.attn.w_qkv", "encoder.0.ffn.w1",
                                 "encoder.1.ffn.w1", "head.weight"}, 2, 1).empty());
}

TEST_CASE("dynamic strategy: a round of I_W on the dense matrices, top-n per group added mid-training, same function") {
  auto model = standard_model<double>();
  nn::mpo_overparameterized<double, decltype(model)> over(model);
  over.over_parameterize("encoder.0.ffn.w1");  // already in S
  const std::vector<std::size_t> labels{0, 1, 2};
  auto params = nn::parameters<double>(over);
  nn::adamw<double> opt;
  for (int step = 0; step < 2; ++step) {  // t = 2 training steps
    params.zero_grad();
    nn::classification_step(over, tprod::tensor3<double>(), small_text_batch(), labels);
    nn::step(opt, params);
  }
  std::vector<std::string> dense = over.dense_weight_matrices();  // I_W of the matrices not yet in S
  std::erase(dense, "embed.table");
  CHECK(std::find(dense.begin(), dense.end(), "encoder.0.ffn.w1") == dense.end());
  nn::importance_meter<double> meter(over, dense);
  params.zero_grad();
  nn::classification_step(over, tprod::tensor3<double>(), small_text_batch(), labels);
  meter.accumulate();
  const std::set<std::string> in_s{"encoder.0.ffn.w1"};
  const auto next = nn::select_next(meter.scores(), in_s, 1, 1);  // N = 1, n = 1: the ffn.w1 group is full
  CHECK(next.size() == 4);  // one of attn.w_qkv, attn.w_o, ffn.w2, and head.weight
  CHECK(std::find(next.begin(), next.end(), "encoder.1.ffn.w1") == next.end());

  const auto eval = small_text_batch(nn::phase::eval);
  const tprod::tensor3<double> before = over.forward(tprod::tensor3<double>(), eval);
  for (const auto& n : next) over.over_parameterize(n);
  const tprod::tensor3<double> after = over.forward(tprod::tensor3<double>(), eval);
  CHECK(double((after.elements() - before.elements()).cwiseAbs().maxCoeff()) <= mpo_test::tol<double>(400));
  CHECK(over.over_parameterized().size() == 5);
}

TEST_CASE("MPO over-parameterization errors name what is wrong") {
  auto model = standard_model<double>();
  nn::mpo_overparameterized<double, decltype(model)> over(model);
  CHECK_THROWS_WITH_AS(over.over_parameterize("encoder.0.attn.w_q"), doctest::Contains("no parameter 'encoder.0.attn.w_q'"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(over.over_parameterize("head.weight", nn::mpo_factorization{{2, 2}, {3, 1}}, 3),
                       doctest::Contains("order 3 was asked for"), tprod::shape_error);  // not silently 2 cores
  CHECK_THROWS_WITH_AS(over.over_parameterize("head.weight", nn::mpo_factorization{{2, 2}, {3}}),
                       doctest::Contains("does not factor"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(over.over_parameterize("head.weight", nn::mpo_factorization{{2, 2, 3}, {3, 1, 1}}),
                       doctest::Contains("does not factor"), tprod::shape_error);
  over.over_parameterize("head.weight");
  CHECK_THROWS_WITH_AS(over.over_parameterize("head.weight"), doctest::Contains("already"), tprod::shape_error);
  CHECK_THROWS_AS(over.weight("encoder.1.ffn.w1"), tprod::shape_error);
  CHECK_THROWS_AS(nn::importance_meter<double>(model, {"nothing"}), tprod::shape_error);
  CHECK_THROWS_AS(nn::balanced_factors(0, 3), tprod::shape_error);

  auto c = small_text_config();  // p = 2 slices under the DCT: not a standard model's matrix
  auto sliced = nn::make_text_classifier<double>(c, tprod::dct{});
  nn::mpo_overparameterized<double, decltype(sliced)> over_sliced(sliced);
  CHECK_THROWS_WITH_AS(over_sliced.over_parameterize("encoder.0.ffn.w1"), doctest::Contains("p > 1"),
                       tprod::shape_error);
}
