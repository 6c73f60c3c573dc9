// tprod svd A.npy -o PREFIX [--transform T] [--rank K | --energy G]: the L-SVD, written as PREFIX_{U,S,V}.npy.
#include "cli.hpp"
#include "tprod/algebra/svd.hpp"

namespace tprod::cli {

command svd_command() {
  return {"svd",
          "A.npy -o PREFIX [--transform T] [--rank K | --energy G]",
          "A = U *_L S *_L V^T, the L-SVD",
          "Writes PREFIX_U.npy, PREFIX_S.npy and PREFIX_V.npy with A = U *_L S *_L V^T (economy size:\n"
          "U (m, r, p), S (r, r, p), V (n, r, p), r = min(m, n)); U and V are L-orthogonal, S is f-diagonal.\n"
          "--rank K keeps the K largest singular values of every transform-domain slice (r = K <= min(m, n)).\n"
          "--energy G keeps the smallest multi-rank holding at least the fraction G of the energy ||L(A)||_F^2\n"
          "(r = the largest kept slice rank; discarded singular values are zero in S).\n"
          "The factors have A's dtype; real under dft for real A. All three files are replaced together.",
          {"A.npy"},
          {output_option("prefix of the output files PREFIX_U.npy, PREFIX_S.npy, PREFIX_V.npy"),
           transform_option(),
           {"rank", 0, "K", "truncate to tubal rank K", false},
           {"energy", 0, "G", "truncate to the energy fraction G, 0 < G <= 1", false}},
          [](const invocation& inv, std::ostream&) {
            if (inv.has("rank") && inv.has("energy"))
              throw usage_error(inv.prefix() + "--rank and --energy exclude each other");
            const std::size_t k = inv.has("rank") ? parse_count(inv, "rank") : 0;
            const double gamma = inv.has("energy") ? parse_real(inv, "energy", 0.0, 1.0, true) : 0.0;
            check_transform_spelling(inv);
            const std::string& file = inv.input(0);
            const std::string prefix = inv.value("output");
            with_input(inv, file, [&](const auto& a, const auto& l, const auto&) {
              const auto r = about(file, [&] {
                return k ? truncated_svd(a, l, k) : gamma > 0 ? energy_truncated_svd(a, l, gamma) : svd(a, l);
              });
              staged_outputs out;
              out.add(prefix + "_U.npy", r.u);
              out.add(prefix + "_S.npy", r.s);
              out.add(prefix + "_V.npy", r.v);
              out.commit();
            });
          }};
}

}  // namespace tprod::cli
