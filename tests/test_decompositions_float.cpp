// Instantiates the Eigen decompositions declared extern in support/tprod_kernels.hpp for float.
#define TPROD_TEST_KERNELS_DEFINE
#include "tprod_kernels.hpp"
#define TPROD_TEST_INSTANTIATE(decl) decl
TPROD_TEST_DECOMPOSITIONS(TPROD_TEST_INSTANTIATE, float);
