// Instantiates the double kernels declared extern in nn_kernels.hpp, once for test_nn (one file per scalar, so that
// the two build in parallel).
#define TPROD_NN_TEST_KERNELS_DEFINE
#include "nn_kernels.hpp"
#define TPROD_NN_TEST_INSTANTIATE(decl) decl
TPROD_NN_TEST_KERNELS(TPROD_NN_TEST_INSTANTIATE, double);
