// SPDX-License-Identifier: Apache-2.0
// tprod identity --size M --tubes P -o I.npy [--transform T] [--dtype float32|float64]: the L-identity.
#include "cli.hpp"
#include "tprod/algebra/identity.hpp"

namespace tprod::cli {

command identity_command() {
  return {"identity",
          "--size M --tubes P -o I.npy [--transform T] [--dtype float32|float64]",
          "I, the L-identity",
          "Writes the (M, M, P) L-identity I = L^-1(stack of identity matrices), so that A *_L I = A.\n"
          "Under dft it is the identity matrix in slice 0 and zeros elsewhere; under dct it is not.\n"
          "The dtype is float64 unless --dtype says float32 (complex of that precision under a complex Z).",
          {},
          {{"size", 0, "M", "rows and columns of each slice", true},
           {"tubes", 0, "P", "number of slices (tube length)", true},
           output_option("where to write I"),
           transform_option(), max_condition_option(),
           {"dtype", 0, "D", "float32 or float64 (default)", false}},
          [](const invocation& inv, std::ostream&) {
            const std::size_t m = parse_count(inv, "size"), p = parse_count(inv, "tubes");
            const std::string dtype = inv.get("dtype").value_or("float64");
            if (dtype != "float32" && dtype != "float64")
              throw usage_error(inv.prefix() + "--dtype must be float32 or float64, got '" + dtype + "'");
            check_transform_spelling(inv);
            const auto t = load_transform(inv, p, "--tubes is " + std::to_string(p));
            with_scalar(*io::dtype_from_name(dtype), [&](auto tag) {
              using T = typename decltype(tag)::type;
              with_transform(t, [&](const auto& l) { write_output(inv.value("output"), identity<T>(m, p, l)); });
            });
          }};
}

}  // namespace tprod::cli
