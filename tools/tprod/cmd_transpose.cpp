// SPDX-License-Identifier: Apache-2.0
// tprod transpose A.npy -o AT.npy [--transform T]: the L-transpose.
#include "cli.hpp"
#include "tprod/algebra/transpose.hpp"

namespace tprod::cli {

command transpose_command() {
  return {"transpose",
          "A.npy -o AT.npy [--transform T]",
          "A^T, the L-transpose",
          "Writes the L-transpose of A (m, n, p): the (n, m, p) tensor whose transform-domain slices are the\n"
          "conjugate transposes of A's. Under dct, identity and a real Z this is the slice-wise transpose; under\n"
          "dft it also reverses slices 1..p-1.",
          {"A.npy"},
          {output_option("where to write A^T"), transform_option(), max_condition_option()},
          [](const invocation& inv, std::ostream&) {
            check_transform_spelling(inv);
            with_input(inv, inv.input(0), [&](const auto& a, const auto& l, const auto&) {
              write_output(inv.value("output"), transpose(a, l));
            });
          }};
}

}  // namespace tprod::cli
