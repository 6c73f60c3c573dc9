// SPDX-License-Identifier: Apache-2.0
// The decompositions' instances for double (tprod/decomp/extern_templates.hpp).
#include "tprod/decomp/extern_templates.hpp"

TPROD_DECOMP_INSTANCES(template, double)
