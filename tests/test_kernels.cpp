// Instantiates the kernels declared extern in support/tprod_kernels.hpp, once for every test executable.
#define TPROD_TEST_KERNELS_DEFINE
#include "tprod_kernels.hpp"
#define TPROD_TEST_INSTANTIATE(decl) decl
TPROD_TEST_FOR_EACH_KERNEL(TPROD_TEST_INSTANTIATE);
