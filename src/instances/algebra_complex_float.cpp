// SPDX-License-Identifier: Apache-2.0
// The algebra's instances for std::complex<float>, with the float/complex<float> tube GEMMs
// (tprod/algebra/extern_templates.hpp).
#include "tprod/algebra/extern_templates.hpp"

TPROD_ALGEBRA_INSTANCES(template, std::complex<float>)
TPROD_ALGEBRA_MIXED_INSTANCES(template, float)
