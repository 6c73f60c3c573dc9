// SPDX-License-Identifier: Apache-2.0
// The algebra's instances for std::complex<double>, with the double/complex<double> tube GEMMs
// (tprod/algebra/extern_templates.hpp).
#include "tprod/algebra/extern_templates.hpp"

TPROD_ALGEBRA_INSTANCES(template, std::complex<double>)
TPROD_ALGEBRA_MIXED_INSTANCES(template, double)
