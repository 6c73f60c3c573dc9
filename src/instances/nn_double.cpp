// SPDX-License-Identifier: Apache-2.0
// The nn layers' instances for double (tprod/nn/extern_templates.hpp).
#include "tprod/nn/extern_templates.hpp"

TPROD_NN_INSTANCES(template, double)
