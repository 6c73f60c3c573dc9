// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tensorized spectral attention with its cores, α, batch and time graph in memory space S, against the host's (Eigen,
// each sequence on its real tokens only): the host_space instantiation runs the CPU backend's tasks (tests/nn), the
// device_space one cuBLAS and the CUDA kernels (tests/cuda). A head with the simplified filter and with learnable
// filters of orders 1 and 3, sequences with and without padding, and multi-head TSA: outputs, ∂J/∂X and the
// gradients of every core and of α compared directly; refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mpo_in_space.hpp"
#include "tprod/graph/time_graph.hpp"
#include "tprod/nn/spectral_attention.hpp"

namespace tprod::test::in_space {

/// A host matrix as a rows×cols×1 tensor3 in S.
template <memory_space S, class T>
tensor3<T, dextents3, S> matrix_in_space(const dense_matrix<T>& m) {
  return tprod::detail::in_space<S>(tensor3<T>(tensor3_view<const T>(m.data(), m.rows(), m.cols(), 1)));
}

/// Every core's (and α's) gradient in S against the host's, in for_each order.
template <class T, class Host, class In>
void check_parameter_gradients(Host& host, In& in, double n) {
  std::vector<std::pair<std::string, ndtensor<T>>> h;
  host.for_each([&](const std::string& name, ndtensor<T>& t) { h.emplace_back(name, t); });
  std::size_t i = 0;
  in.for_each([&](const std::string& name, auto& t) {
    REQUIRE(i < h.size());
    CAPTURE(name);
    CHECK(name == h[i].first);
    const ndtensor<T> back = to_ndtensor(t);
    CHECK(shape_of(back) == shape_of(h[i].second));
    CHECK(rel_diff_to(tprod::detail::in_space<host_space>(
                          tensor3<T>(tensor3_view<const T>(back.data(), back.size(), 1, 1))),
                      dense_matrix<T>(tprod::detail::as_matrix(h[i].second, h[i].second.size(), 1))) <=
          mpo_tolerance<T>(n));
    ++i;
  });
  CHECK(i == h.size());
}

/// TSA heads and multi-head TSA in S equal the host's, forward and backward.
template <class T, memory_space S>
void check_tsa() {
  const std::size_t l = 6, batch = 3;
  const dense_matrix<T> omega = bidirectional_time_adjacency<T>(l, 0.8);
  const auto omega_in = matrix_in_space<S>(omega);
  const dense_matrix<T> x = random_matrix<T>(batch * l, 8, 71), dy = random_matrix<T>(batch * l, 8, 72);
  const auto x_in = matrix_in_space<S>(x), dy_in = matrix_in_space<S>(dy);
  const double n = 64.0 * double(l);  // roundings: the MPO layers' 8x8 products, then L-long sums per filter step
  for (const std::size_t order : {std::size_t(0), std::size_t(1), std::size_t(3)}) {
    auto prm = nn::make_tsa_head_params<T>({2, 2, 2}, {2, 2, 2}, 2, order, 73);
    for (std::size_t k = 0; k < prm.alpha.size(); ++k) prm.alpha.data()[k] = T(0.6) - T(0.25) * T(k);
    const auto prm_in = nn::copy<S>(prm);
    for (const auto& lengths : {std::vector<std::size_t>{}, std::vector<std::size_t>{6, 2, 5}}) {
      CAPTURE(order);
      CAPTURE(lengths.size());
      const auto [y, saved] = nn::tsa_head_forward<T>(prm, x, omega, lengths);
      tensor3<T, dextents3, S> y_in;
      nn::tsa_head_saved_in<T, S> saved_in;
      nn::tsa_head_forward(prm_in, x_in, omega_in, lengths, y_in, saved_in);
      CHECK(rel_diff_to(y_in, y) <= mpo_tolerance<T>(n));
      auto g = nn::tsa_head_backward<T>(prm, saved, dy);
      auto g_in = nn::tsa_head_backward(prm_in, saved_in, dy_in);
      CHECK(rel_diff_to(g_in.d_input, g.d_input) <= mpo_tolerance<T>(n));
      check_parameter_gradients<T>(g.d_params, g_in.d_params, n);
    }
  }

  // multi-head: two heads and the projection, one sequence padded
  auto prm = nn::make_tsa_params<T>({2, 2, 2}, {2, 2, 2}, 2, 2, 2, 74);
  const auto prm_in = nn::copy<S>(prm);
  const std::vector<std::size_t> lengths{6, 3, 6};
  const auto [y, saved] = nn::tsa_forward<T>(prm, x, omega, lengths);
  tensor3<T, dextents3, S> y_in;
  nn::tsa_saved_in<T, S> saved_in;
  nn::tsa_forward(prm_in, x_in, omega_in, lengths, y_in, saved_in);
  CHECK(rel_diff_to(y_in, y) <= mpo_tolerance<T>(4 * n));
  const dense_matrix<T> dz = random_matrix<T>(batch * l, prm.projection.out_width(), 75);
  auto g = nn::tsa_backward<T>(prm, saved, dz);
  auto g_in = nn::tsa_backward(prm_in, saved_in, matrix_in_space<S>(dz));
  CHECK(rel_diff_to(g_in.d_input, g.d_input) <= mpo_tolerance<T>(4 * n));
  check_parameter_gradients<T>(g.d_params, g_in.d_params, 4 * n);

  // refusals: a custom ε, a time graph that is not square, rows that are not whole sequences, a wrong gradient
  auto custom = nn::copy<S>(nn::make_tsa_head_params<T>({2, 4}, {4, 2}, 3, 0, 76));
  custom.epsilon = {[](T s) { return s; }, [](T) { return T(1); }};
  nn::tsa_head_saved_in<T, S> s;
  tensor3<T, dextents3, S> out;
  CHECK_THROWS_WITH_AS(nn::tsa_head_forward(custom, x_in, omega_in, {}, out, s), doctest::Contains("ReLU"),
                       shape_error);
  const auto& head = prm_in.heads[0];
  CHECK_THROWS_WITH_AS(nn::tsa_head_forward(head, x_in, matrix_in_space<S>(dense_matrix<T>(dense_matrix<T>::Zero(6, 5))),
                                            {}, out, s),
                       doctest::Contains("6x5x1"), shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_head_forward(head, matrix_in_space<S>(random_matrix<T>(10, 8, 1)), omega_in, {}, out, s),
                       doctest::Contains("whole sequences"), shape_error);
  CHECK_THROWS_WITH_AS(nn::tsa_head_forward(head, x_in, omega_in, {6, 0, 6}, out, s),
                       doctest::Contains("outside 1..6"), shape_error);
  nn::tsa_head_forward(head, x_in, omega_in, {}, out, s);
  CHECK_THROWS_WITH_AS(nn::tsa_head_backward(head, s, matrix_in_space<S>(random_matrix<T>(batch * l, 4, 1))),
                       doctest::Contains("does not match the output"), shape_error);
}

}  // namespace tprod::test::in_space
