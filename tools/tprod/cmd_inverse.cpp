// SPDX-License-Identifier: Apache-2.0
// tprod inverse A.npy -o Ainv.npy [--transform T]: the L-inverse.
#include "cli.hpp"
#include "tprod/algebra/inverse.hpp"

namespace tprod::cli {

command inverse_command() {
  return {"inverse",
          "A.npy -o Ainv.npy [--transform T]",
          "A^-1, the L-inverse",
          "Writes the L-inverse of A (m, m, p): the tensor whose transform-domain slices are the inverses of\n"
          "A's, so that A *_L A^-1 = I. A singular or numerically singular slice is a data error naming it.",
          {"A.npy"},
          {output_option("where to write A^-1"), transform_option(), max_condition_option()},
          [](const invocation& inv, std::ostream&) {
            check_transform_spelling(inv);
            const std::string& file = inv.input(0);
            with_input(inv, file, [&](const auto& a, const auto& l, const auto&) {
              write_output(inv.value("output"), about(file, [&] { return inverse(a, l); }));
            });
          }};
}

}  // namespace tprod::cli
