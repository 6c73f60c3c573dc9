// SPDX-License-Identifier: Apache-2.0
// The decompositions of device_ndtensor, device MPOs (the product and the MPO linear layer), the device polynomial
// graph filter and tensorized spectral attention (paper 002's TSA heads and multi-head TSA), through the backend tasks (cuBLAS and cuSOLVER), against the host's Eigen code on the same inputs:
// the checks tests/decomp, tests/nn and tests/graph run through the CPU backend's tasks, here in device memory.
#include "cuda_test.hpp"
#include "decomp_in_space.hpp"
#include "graph_in_space.hpp"
#include "mpo_in_space.hpp"
#include "tsa_in_space.hpp"

using namespace tprod;

TEST_CASE_TEMPLATE("device HOSVD, ST-HOSVD and HOOI equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_tucker<T, device_space>();
}

TEST_CASE_TEMPLATE("device mode products of an order-N tensor equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_mode_products<T, device_space>();
}

TEST_CASE_TEMPLATE("device decompositions refuse bad input as on the host", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_refusals<T, device_space>();
}

TEST_CASE_TEMPLATE("device TT-SVD equals the host's, its cores on the device", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_tensor_train<T, device_space>();
}

TEST_CASE_TEMPLATE("device TT and MPO rounding equal the host's, the cores on the device", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_tt_round<T, device_space>();
}

TEST_CASE_TEMPLATE("device TT sums, scaling, inner products and norms equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_tt_arithmetic<T, device_space>();
}

TEST_CASE_TEMPLATE("device block terms and CP take the host's ALS steps", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_block_terms<T, device_space>();
}

TEST_CASE_TEMPLATE("device mode permutations, MPOs and QTTs equal the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_mpo_conversions<T, device_space>();
}

TEST_CASE_TEMPLATE("device MPO product and MPO linear layer equal the host's, forward and backward", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_mpo<T, device_space>();
}

TEST_CASE_TEMPLATE("device polynomial graph filter equals the host's, forward and backward", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_polynomial_filter<T, device_space>();
}

TEST_CASE_TEMPLATE("device graph signals: Fourier transforms, spectral convolution and RGTN equal the host's", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_graph_signals<T, device_space>();
}

TEST_CASE_TEMPLATE("device tensorized spectral attention equals the host's: heads, filters, padding, every gradient", T,
                   TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_tsa<T, device_space>();
}

TEST_CASE_TEMPLATE("device shared-factor Tucker of attention weights equals the host's", T, TPROD_DEVICE_REAL_SCALARS) {
  test::in_space::check_multihead_tucker<T, device_space>();
}
