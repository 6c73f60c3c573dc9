// SPDX-License-Identifier: Apache-2.0
#pragma once
// The MPO product and the MPO linear layer with their cores and batch in memory space S, against the host's (Eigen,
// blocked by rows): the host_space instantiation runs the CPU backend's tasks (tests/nn), the device_space one cuBLAS
// (tests/cuda). Forward outputs and all gradients compared directly.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tprod/nn/mpo_linear.hpp"

namespace tprod::test::in_space {

/// ‖a − b‖_F/(‖b‖_F + tiny) for a tensor3 in S and a host matrix of the same column-major elements.
template <class T, memory_space S>
double rel_diff_to(const tensor3<T, dextents3, S>& a, const dense_matrix<T>& b) {
  const tensor3<T> h = tprod::detail::in_space<host_space>(a);
  REQUIRE(h.size() == std::size_t(b.size()));
  double d = 0, n = 0;
  for (std::size_t e = 0; e < h.size(); ++e) {
    d += std::pow(double(h.data()[e]) - double(b.data()[e]), 2);
    n += std::pow(double(b.data()[e]), 2);
  }
  return std::sqrt(d) / (std::sqrt(n) + 1e-300);
}

template <class T>
double mpo_tolerance(double n) {
  return 100.0 * double(std::numeric_limits<T>::epsilon()) * n;
}

/// mpo_product, the layer's forward and backward in S equal the host's on several factorizations, ranks and batches.
template <class T, memory_space S>
void check_mpo() {
  struct mpo_case {
    nd_shape rows, cols;
    std::vector<std::size_t> ranks;
  };
  const mpo_case cases[] = {{{2, 3, 2}, {3, 2, 2}, {2, 3}}, {{2, 2, 2, 2}, {2, 2, 2, 2}, {2, 2, 2}},
                            {{6}, {4}, {}},                  {{4, 1, 3}, {1, 5, 2}, {3, 1}}};
  std::uint64_t seed = 60;
  for (const auto& c : cases) {
    const auto prm = nn::make_mpo_linear_params<T>(c.rows, c.cols, c.ranks, ++seed);
    const auto prm_in = nn::copy<S>(prm);
    CHECK(prm_in.weight.ranks() == prm.weight.ranks());
    CHECK(to_mpo(prm_in.weight).full() == prm.weight.full());
    for (const std::size_t batch : {std::size_t(5), std::size_t(1)}) {
      CAPTURE(shape_string(c.rows));
      CAPTURE(batch);
      const dense_matrix<T> x = random_matrix<T>(batch, prm.in_width(), seed + 7);
      const dense_matrix<T> d_out = random_matrix<T>(batch, prm.out_width(), seed + 8);
      const auto x_in = tprod::detail::in_space<S>(tensor3<T>(tensor3_view<const T>(x.data(), batch, x.cols(), 1)));
      const auto d_in = tprod::detail::in_space<S>(tensor3<T>(tensor3_view<const T>(d_out.data(), batch, d_out.cols(), 1)));
      const double n = double(prm.in_width() * prm.out_width());
      CHECK(rel_diff_to(mpo_product(x_in, prm_in.weight), mpo_product(x, prm.weight)) <= mpo_tolerance<T>(n));

      const auto [y, saved] = nn::mpo_linear_forward(prm, x);
      tensor3<T, dextents3, S> y_in;
      nn::mpo_linear_saved_in<T, S> saved_in;
      nn::mpo_linear_forward(prm_in, x_in, y_in, saved_in);
      CHECK(rel_diff_to(y_in, y) <= mpo_tolerance<T>(n));
      CHECK(saved_in.bytes() >= x.size() * sizeof(T));

      const auto g = nn::mpo_linear_backward(prm, saved, d_out);
      const auto g_in = nn::mpo_linear_backward(prm_in, saved_in, d_in);
      CHECK(rel_diff_to(g_in.d_input, g.d_input) <= mpo_tolerance<T>(n));
      REQUIRE(g_in.d_params.weight.order() == g.d_params.weight.order());
      for (std::size_t k = 0; k < g.d_params.weight.order(); ++k) {
        CAPTURE(k);
        const ndtensor<T> host = g.d_params.weight.cores[k];
        const ndtensor<T> in = to_ndtensor(g_in.d_params.weight.cores[k]);
        CHECK(tprod::shape_of(in) == tprod::shape_of(host));
        CHECK(rel_diff_to(tprod::detail::in_space<S>(tensor3<T>(tensor3_view<const T>(in.data(), in.size(), 1, 1))),
                          dense_matrix<T>(tprod::detail::as_matrix(host, host.size(), 1))) <= mpo_tolerance<T>(n));
      }
    }
  }
  const auto prm_in = nn::copy<S>(nn::make_mpo_linear_params<T>({2, 3}, {2, 2}, std::vector<std::size_t>{2}, 1));
  const auto wrong = tprod::detail::in_space<S>(tensor3<T>(4, 5, 1));
  tensor3<T, dextents3, S> y;
  nn::mpo_linear_saved_in<T, S> saved;
  CHECK_THROWS_WITH_AS(nn::mpo_linear_forward(prm_in, wrong, y, saved), doctest::Contains("4x5x1"), shape_error);
  CHECK_THROWS_AS(nn::mpo_linear_backward(prm_in, saved, tprod::detail::in_space<S>(tensor3<T>(4, 4, 1))), shape_error);
  nn::mpo_linear_forward(prm_in, tprod::detail::in_space<S>(tensor3<T>(4, 6, 1)), y, saved);
  CHECK_THROWS_AS(nn::mpo_linear_backward(prm_in, saved, tprod::detail::in_space<S>(tensor3<T>(4, 5, 1))), shape_error);
}

}  // namespace tprod::test::in_space
