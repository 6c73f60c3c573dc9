// The decompositions' instances for float (tprod/decomp/extern_templates.hpp).
#include "tprod/decomp/extern_templates.hpp"

TPROD_DECOMP_INSTANCES(template, float)
