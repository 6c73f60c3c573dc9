// SPDX-License-Identifier: Apache-2.0
// The algebra's instances for double (tprod/algebra/extern_templates.hpp), and the library's alignment mark.
#include "tprod/algebra/extern_templates.hpp"

TPROD_ALGEBRA_INSTANCES(template, double)

// Defines the symbol that every program using these instances references (see extern_templates.hpp).
const int tprod::detail::TPROD_INSTANCES_ABI_NAME(EIGEN_MAX_ALIGN_BYTES) = EIGEN_MAX_ALIGN_BYTES;
