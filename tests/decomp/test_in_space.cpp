// SPDX-License-Identifier: Apache-2.0
// The decompositions of ndtensor_in<T, host_space>, which compute through the CPU backend's tasks (the route a
// device_ndtensor takes through cuBLAS and cuSOLVER), against those of the same ndtensor (Eigen directly).
#include <doctest/doctest.h>

#include "decomp_in_space.hpp"

using namespace tprod;

TEST_CASE_TEMPLATE("HOSVD, ST-HOSVD and HOOI of an ndtensor_in equal those of the ndtensor", T, double) {
  test::in_space::check_tucker<T, host_space>();
}

TEST_CASE_TEMPLATE("mode products of an ndtensor_in equal those of the ndtensor", T, double) {
  test::in_space::check_mode_products<T, host_space>();
}

TEST_CASE_TEMPLATE("decompositions of an ndtensor_in refuse bad input as on the ndtensor", T, double) {
  test::in_space::check_refusals<T, host_space>();
}

TEST_CASE_TEMPLATE("TT-SVD of an ndtensor_in equals that of the ndtensor, its cores in the same space", T,
                   double) {
  test::in_space::check_tensor_train<T, host_space>();
}

TEST_CASE_TEMPLATE("TT and MPO rounding of cores in a memory space equal the host's, the cores kept there", T,
                   double) {
  test::in_space::check_tt_round<T, host_space>();
}

TEST_CASE_TEMPLATE("sums, scaling, inner products and norms of trains in a memory space equal the host's", T,
                   double) {
  test::in_space::check_tt_arithmetic<T, host_space>();
}

TEST_CASE_TEMPLATE("the shared-factor Tucker of attention weights in a memory space equals the host's", T,
                   double) {
  test::in_space::check_multihead_tucker<T, host_space>();
}

TEST_CASE_TEMPLATE("mode permutations, MPOs and QTTs of tensors in a memory space equal the host's", T, double) {
  test::in_space::check_mpo_conversions<T, host_space>();
}

TEST_CASE_TEMPLATE("block terms and CP of an ndtensor_in take the host's ALS steps", T, double) {
  test::in_space::check_block_terms<T, host_space>();
}
