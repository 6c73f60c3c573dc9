// SPDX-License-Identifier: Apache-2.0
// Tensorized spectral attention (TSA): forward against a plain-loop reference of Algorithm 1 (with the general
// polynomial filter and padding), gradient checks of the input, every key/value/projection core and α, the QTT
// parameter count, Θ's zero diagonal and symmetry, and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "mpo_test_util.hpp"
#include "tprod/graph/time_graph.hpp"
#include "tprod/nn/spectral_attention.hpp"

using namespace mpo_test;
namespace nn = tprod::nn;

namespace {

double softplus(double s) { return std::log1p(std::exp(s)); }

/// Algorithm 1 by loops, in double: K = XW_k, V = XW_v (W from the cores), θ = ε(⟨k_a, k_b⟩/d_k) off the diagonal
/// and the padding, Ψ = Ω ⊙ Θ, Y = Σ_k α_k Ψᵏ V with explicit powers.
template <class T>
dmat reference_head(const nn::tsa_head_params<T>& p, const dmat& x, const dmat& omega,
                    const std::vector<std::size_t>& lengths, double (*eps)(double)) {
  const dmat k = x * reference_full(p.key.weight), v = x * reference_full(p.value.weight);
  std::vector<double> alpha{1, 1};
  if (p.alpha.size()) alpha.assign(p.alpha.data(), p.alpha.data() + p.alpha.size());
  const Eigen::Index l = omega.rows();
  const double dk = p.d_k > 0 ? p.d_k : double(k.cols());
  dmat y(x.rows(), v.cols());
  for (Eigen::Index b = 0; b * l < x.rows(); ++b) {
    const auto n = lengths.empty() ? l : Eigen::Index(lengths[std::size_t(b)]);
    dmat psi = dmat::Zero(l, l);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j) {
        if (i == j) continue;
        double s = 0;
        for (Eigen::Index c = 0; c < k.cols(); ++c) s += k(b * l + i, c) * k(b * l + j, c);
        psi(i, j) = omega(i, j) * eps(s / dk);
      }
    dmat term = v.middleRows(b * l, l), acc = dmat::Zero(l, v.cols());
    for (double a : alpha) {
      acc += a * term;
      term = psi * term;
    }
    y.middleRows(b * l, l) = acc;
  }
  return y;
}

double relu(double s) { return std::max(s, 0.0); }

/// Adds a head's key and value cores and (when learnable) α to a gradient check.
void add_head(flat_grad::diff_map& f, nn::tsa_head_params<double>& h, const std::string& prefix) {
  add_cores(f, h.key.weight, prefix + "key.");
  add_cores(f, h.value.weight, prefix + "value.");
  if (!h.simplified()) {
    f.vars.push_back({h.alpha.data(), h.alpha.size()});
    f.names.push_back(prefix + "alpha");
  }
}
void append_head(std::vector<flat_grad::vec>& out, const nn::tsa_head_params<double>& g) {
  append_cores(out, g.key.weight);
  append_cores(out, g.value.weight);
  if (!g.simplified()) out.push_back(Eigen::Map<const flat_grad::vec>(g.alpha.data(), Eigen::Index(g.alpha.size())));
}

}  // namespace

TEST_CASE_TEMPLATE("TSA head forward equals Algorithm 1 by loops (simplified and polynomial filters, padding)", T,
                   float, double) {
  const std::size_t l = 6, batch = 2;
  const dense_matrix<T> omega = tprod::bidirectional_time_adjacency<T>(l, 0.8);
  const dense_matrix<T> x = tprod::random_matrix<T>(batch * l, 8, 51);
  for (const std::size_t order : {0, 1, 3}) {
    CAPTURE(order);
    auto prm = nn::make_tsa_head_params<T>({2, 2, 2}, {2, 2, 2}, 2, order, 52);
    for (std::size_t k = 0; k < prm.alpha.size(); ++k) prm.alpha.data()[k] = T(0.5) - T(0.3) * T(k);
    for (const auto& lengths : {std::vector<std::size_t>{}, std::vector<std::size_t>{4, 6}}) {
      const auto [y, saved] = nn::tsa_head_forward<T>(prm, x, omega, lengths);
      const dmat ref = reference_head(prm, x.template cast<double>(), omega.template cast<double>(), lengths, relu);
      CHECK(max_abs_diff(y.template cast<double>(), ref) <= tol<T>(200) * std::max(1.0, ref.cwiseAbs().maxCoeff()));
      for (const auto& psi : saved.psi) {  // Θ has a zero diagonal; Ψ is symmetric since Ω is
        CHECK(psi.diagonal().isZero(0));
        CHECK(max_abs_diff(psi.template cast<double>(), psi.transpose().template cast<double>()) == 0.0);
      }
      if (!lengths.empty()) CHECK(saved.psi[0].rows() == 4);  // the real tokens only
    }
  }
  // a user ε (softplus)
  auto prm = nn::make_tsa_head_params<T>({2, 4}, {4, 2}, 3, 2, 53);
  prm.epsilon = {[](T s) { return T(softplus(double(s))); }, [](T s) { return T(1 / (1 + std::exp(-double(s)))); }};
  prm.d_k = 3;
  const auto y = nn::tsa_head_forward<T>(prm, x, omega).first;
  const dmat ref = reference_head(prm, x.template cast<double>(), omega.template cast<double>(), {}, softplus);
  CHECK(max_abs_diff(y.template cast<double>(), ref) <= tol<T>(200) * std::max(1.0, ref.cwiseAbs().maxCoeff()));
}

TEST_CASE("TSA head gradients: input, key and value cores, α (finite differences, adjoint identity)") {
  const std::size_t l = 5;
  const dense_matrix<double> omega = tprod::bidirectional_time_adjacency<double>(l, 0.7);
  struct setup {
    std::size_t order;
    bool smooth;
    std::vector<std::size_t> lengths;
  };
  for (const setup& s : {setup{0, false, {}}, setup{3, true, {3, 5}}, setup{2, false, {5, 4}}}) {
    // not bindings: lambdas below capture them
    const std::size_t order = s.order;
    const bool smooth = s.smooth;
    const std::vector<std::size_t>& lengths = s.lengths;
    CAPTURE(order);
    auto prm = nn::make_tsa_head_params<double>({2, 2, 2}, {2, 2, 2}, 2, order, 61);
    for (std::size_t k = 0; k < prm.alpha.size(); ++k) prm.alpha.data()[k] = 0.6 - 0.35 * double(k);
    if (smooth) prm.epsilon = {[](double s) { return softplus(s); }, [](double s) { return 1 / (1 + std::exp(-s)); }};
    // keys scaled up so that the scores spread over both signs of ReLU
    dense_matrix<double> x = 3 * tprod::random_matrix<double>(2 * l, 8, 62);
    flat_grad::diff_map f;
    f.vars = {flat_grad::span_of(x)};
    f.names = {"x"};
    add_head(f, prm, "");
    f.forward = [&] { return flat_grad::flat(nn::tsa_head_forward<double>(prm, x, omega, lengths).first); };
    f.backward = [&](const flat_grad::vec& w) {
      const auto saved = nn::tsa_head_forward<double>(prm, x, omega, lengths).second;
      const auto g = nn::tsa_head_backward<double>(prm, saved, Eigen::Map<const dense_matrix<double>>(w.data(), x.rows(), 8));
      std::vector<flat_grad::vec> out{flat_grad::flat(g.d_input)};
      append_head(out, g.d_params);
      return out;
    };
    flat_grad::check_gradients(f, 63);
  }
}

TEST_CASE("multi-head TSA gradients: every head, α and the projection cores") {
  const std::size_t l = 4;
  const dense_matrix<double> omega = tprod::bidirectional_time_adjacency<double>(l, 0.9);
  auto prm = nn::make_tsa_params<double>({2, 2}, {2, 2}, 2, 2, 2, 71);
  prm.heads[1].alpha.data()[0] = 0.3;
  dense_matrix<double> x = 2 * tprod::random_matrix<double>(2 * l, 4, 72);
  const std::vector<std::size_t> lengths{4, 3};
  flat_grad::diff_map f;
  f.vars = {flat_grad::span_of(x)};
  f.names = {"x"};
  add_head(f, prm.heads[0], "head_0.");
  add_head(f, prm.heads[1], "head_1.");
  add_cores(f, prm.projection.weight, "projection.");
  f.forward = [&] { return flat_grad::flat(nn::tsa_forward<double>(prm, x, omega, lengths).first); };
  f.backward = [&](const flat_grad::vec& w) {
    const auto saved = nn::tsa_forward<double>(prm, x, omega, lengths).second;
    const auto g = nn::tsa_backward<double>(prm, saved, Eigen::Map<const dense_matrix<double>>(w.data(), x.rows(), 4));
    std::vector<flat_grad::vec> out{flat_grad::flat(g.d_input)};
    append_head(out, g.d_params.heads[0]);
    append_head(out, g.d_params.heads[1]);
    append_cores(out, g.d_params.projection.weight);
    return out;
  };
  flat_grad::check_gradients(f, 73);

  // the projection combines the heads: Y = [Y_0 | Y_1]·W_o
  const auto y = nn::tsa_forward<double>(prm, x, omega, lengths).first;
  dmat cat(x.rows(), 8);
  cat << reference_head(prm.heads[0], x, omega, lengths, relu), reference_head(prm.heads[1], x, omega, lengths, relu);
  CHECK(max_abs_diff(y, cat * reference_full(prm.projection.weight)) <= 1e-12);
}

TEST_CASE("QTT TSA parameter counts and the visiting order of for_each") {
  // N = 6: key and value 16·5 each per head; projection (2,…,2,H)×(2,…,2,1) with ranks 2: 8 + 5·16 + 2·H·1·1
  const auto prm = nn::make_qtt_tsa_params<float>(64, 2, 3, 1);
  CHECK(prm.heads[0].key.parameter_count() == 80);
  CHECK(prm.heads[0].parameter_count() == 80 + 80 + 3);
  CHECK(prm.projection.parameter_count() == 8 + 5 * 16 + 2 * 2);
  CHECK(prm.parameter_count() == 2 * 163 + 92);
  auto copy = prm;
  std::vector<std::string> names;
  std::size_t total = 0;
  copy.for_each([&](std::string_view name, ndtensor<float>& t) {
    names.emplace_back(name);
    total += t.size();
  });
  CHECK(total == prm.parameter_count());
  CHECK(names.front() == "head_0.key.core_0");
  CHECK(names[12] == "head_0.alpha");
  CHECK(names.back() == "projection.core_6");
}

TEST_CASE("TSA refuses inputs, graphs and lengths that do not fit, naming them") {
  const auto prm = nn::make_tsa_params<double>({2, 2}, {2, 2}, 2, 1, 0, 81);
  const dense_matrix<double> omega = tprod::bidirectional_time_adjacency<double>(4, 0.5);
  CHECK_THROWS_WITH_AS(nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(8, 5), omega),
                       doctest::Contains("input 8x5 does not match the key and value weights of input width 4"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(6, 4), omega),
                       doctest::Contains("6 input rows are not whole sequences of the 4 time steps of the 4x4 time graph"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(8, 4), omega, {4}),
                       doctest::Contains("1 sequence lengths for a batch of 2"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(8, 4), omega, {4, 5}),
                       doctest::Contains("length 5 of sequence 1 is outside 1..4"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(8, 4), dense_matrix<double>(4, 3)),
                       doctest::Contains("the time graph must be square, got 4x3"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::make_qtt_tsa_params<double>(96, 1, 0, 1), doctest::Contains("96 is not a power of two"),
                       tprod::shape_error);
  const auto saved = nn::tsa_forward<double>(prm, dense_matrix<double>::Zero(8, 4), omega).second;
  CHECK_THROWS_WITH_AS(nn::tsa_backward<double>(prm, saved, dense_matrix<double>(8, 3)),
                       doctest::Contains("gradient 8x3 does not match the output 8x4"), tprod::shape_error);
}

TEST_CASE("TSA passes: the same bits on 1 and 2 threads, and buffers reused across batches of other shapes") {
  // Large enough that the sequences run in parallel (B·L²·J ≥ the backend's threshold of work).
  const std::size_t l = 64, batch = 9;
  const dense_matrix<float> omega = tprod::bidirectional_time_adjacency<float>(l, 0.9);
  auto prm = nn::make_tsa_params<float>({4, 4, 2}, {4, 4, 2}, 3, 2, 3, 91);
  const dense_matrix<float> x = tprod::random_matrix<float>(batch * l, 32, 92);
  const dense_matrix<float> dy = tprod::random_matrix<float>(batch * l, 32, 93);
  const std::vector<std::size_t> lengths{64, 10, 33, 64, 1, 63, 64, 2, 40};
  auto run = [&](std::size_t threads, nn::tsa_saved<float>& saved, nn::tsa_workspace<float>& ws) {
    const tprod::execution_scope scope(tprod::execution{tprod::transform_path::automatic, threads});
    dense_matrix<float> y;
    nn::tsa_grads<float> g;
    nn::tsa_forward<float>(prm, x, omega, lengths, y, saved, ws);
    nn::tsa_backward<float>(prm, saved, dy, g, ws);
    std::vector<flat_grad::vec> out{flat_grad::flat(y.cast<double>().eval()),
                                    flat_grad::flat(g.d_input.cast<double>().eval())};
    g.d_params.for_each([&](const std::string&, ndtensor<float>& t) {
      out.push_back(Eigen::Map<const Eigen::VectorXf>(t.data(), Eigen::Index(t.size())).cast<double>());
    });
    return out;
  };
  nn::tsa_saved<float> s1, s2;
  nn::tsa_workspace<float> w1, w2;
  const auto one = run(1, s1, w1);
  // the second object first holds the state of a smaller batch of shorter sequences
  const dense_matrix<float> omega_short = tprod::bidirectional_time_adjacency<float>(16, 0.9);
  dense_matrix<float> y_short;
  nn::tsa_forward<float>(prm, x.topRows(3 * 16), omega_short, {16, 5, 9}, y_short, s2, w2);
  const auto two = run(2, s2, w2);
  REQUIRE(one.size() == two.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(one[i].size() == two[i].size());
    CHECK(one[i] == two[i]);
  }
  // and the padded rows of each sequence are α_0 V there (α_0 = 1 at initialization)
  const auto y = nn::tsa_head_forward<float>(prm.heads[0], x, omega, lengths).first;
  const dmat v = x.cast<double>() * reference_full(prm.heads[0].value.weight);
  CHECK(max_abs_diff(y.middleRows(l + 10, l - 10).cast<double>(), v.middleRows(l + 10, l - 10)) <=
        tol<float>(200) * std::max(1.0, v.cwiseAbs().maxCoeff()));
}
