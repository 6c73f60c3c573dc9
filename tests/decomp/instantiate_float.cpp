// Instantiates the decompositions for float once for the whole test program (see instantiation.hpp).
#include "tprod/decomp/instantiation.hpp"

TPROD_DECOMP_INSTANTIATE(float)
