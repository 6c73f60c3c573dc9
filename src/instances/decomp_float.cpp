// SPDX-License-Identifier: Apache-2.0
// The decompositions' instances for float (tprod/decomp/extern_templates.hpp).
#include "tprod/decomp/extern_templates.hpp"

TPROD_DECOMP_INSTANCES(template, float)
