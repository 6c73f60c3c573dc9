// SPDX-License-Identifier: Apache-2.0
// The decompositions of device_ndtensor (cuBLAS and cuSOLVER through the backend tasks) against those of the same
// host ndtensor (Eigen): the checks of tests/decomp/test_in_space.cpp, in device memory.
#include "cuda_test.hpp"
#include "decomp_in_space.hpp"
#include "mpo_in_space.hpp"

using namespace tprod;

TEST_CASE_TEMPLATE("device HOSVD, ST-HOSVD and HOOI equal the host's", T, float, double) {
  test::in_space::check_tucker<T, device_space>();
}

TEST_CASE_TEMPLATE("device mode products of an order-N tensor equal the host's", T, float, double) {
  test::in_space::check_mode_products<T, device_space>();
}

TEST_CASE_TEMPLATE("device decompositions refuse bad input as on the host", T, float, double) {
  test::in_space::check_refusals<T, device_space>();
}

TEST_CASE_TEMPLATE("device TT-SVD equals the host's, its cores on the device", T, float, double) {
  test::in_space::check_tensor_train<T, device_space>();
}

TEST_CASE_TEMPLATE("device MPO product and MPO linear layer equal the host's, forward and backward", T, float, double) {
  test::in_space::check_mpo<T, device_space>();
}
