// SPDX-License-Identifier: Apache-2.0
// tprod product A.npy B.npy -o C.npy [--transform T]: C = A *_L B.
#include "cli.hpp"
#include "tprod/algebra/product.hpp"

namespace tprod::cli {

command product_command() {
  return {"product",
          "A.npy B.npy -o C.npy [--transform T]",
          "C = A *_L B, the L-product",
          "Writes C = A *_L B = L^-1(L(A) facewise L(B)) for A of shape (m, l, p) and B of shape (l, n, p).\n"
          "C has the common dtype of A and B (float32 and float64 give float64; real and complex give complex);\n"
          "real inputs give a real C under dct, dft, identity and a real Z, a complex C under a complex Z.",
          {"A.npy", "B.npy"},
          {output_option("where to write C"), transform_option(), max_condition_option()},
          [](const invocation& inv, std::ostream&) {
            check_transform_spelling(inv);
            const tensor_header a = read_tensor_header(inv.input(0)), b = read_tensor_header(inv.input(1));
            if (a.extents.n() != b.extents.m() || a.extents.p() != b.extents.p())
              throw data_error(a.file + " (" + a.extents.to_string() + ") and " + b.file + " (" +
                               b.extents.to_string() + ") cannot be multiplied: " +
                               (a.extents.p() != b.extents.p()
                                    ? "their tube counts differ"
                                    : "the columns of the first differ from the rows of the second"));
            if (const std::string why = shape_limit_problem(a.extents.m(), b.extents.n(), a.extents.p()); !why.empty())
              throw data_error(a.file + " (" + a.extents.to_string() + ") and " + b.file + " (" +
                               b.extents.to_string() + "): their product of shape " +
                               shape_string(a.extents.m(), b.extents.n(), a.extents.p()) + " is too large: " + why);
            const auto t = load_transform(inv, a);
            with_scalar(io::promote(a.dtype, b.dtype), [&](auto tag) {
              using T = typename decltype(tag)::type;
              auto x = io::read_tensor3<T>(a.file);
              auto y = io::read_tensor3<T>(b.file);
              with_transform(t, [&](const auto& l) {
                // The program owns its inputs: they are transformed in place where the transform allows it, and
                // freed before C is transformed back in place, so the peak is about A + B + C (docs/performance.md).
                auto chat = [&] {
                  const auto xhat = transform(std::move(x), l);
                  const auto yhat = transform(std::move(y), l);
                  return xhat * yhat;
                }();
                write_output(inv.value("output"), inverse_transform(std::move(chat)));
              });
            });
          }};
}

}  // namespace tprod::cli
