// Instantiates the decompositions for double once for the benchmark program (see instantiation.hpp).
#include "tprod/decomp/instantiation.hpp"

TPROD_DECOMP_INSTANTIATE(double)
