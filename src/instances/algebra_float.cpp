// SPDX-License-Identifier: Apache-2.0
// The algebra's instances for float (tprod/algebra/extern_templates.hpp). One scalar and area per file, so
// that the library builds in parallel.
#include "tprod/algebra/extern_templates.hpp"

TPROD_ALGEBRA_INSTANCES(template, float)
