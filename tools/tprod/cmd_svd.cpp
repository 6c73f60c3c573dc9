// tprod svd and tprod rank: the two commands built on the slice SVDs, kept in one translation unit because
// Eigen's BDCSVD costs about a minute of compile time per scalar type and both need it for all four.
//   tprod svd A.npy -o PREFIX [--transform T] [--rank K | --energy G]: the L-SVD, written as PREFIX_{U,S,V}.npy.
//   tprod rank A.npy [--transform T] [--tol TOL]: tubal, average and multi-rank as one JSON object.
#include <charconv>
#include <cstdio>
#include <limits>

#include "cli.hpp"
#include "tprod/algebra/rank.hpp"
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

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form: 10, 2.5
  return std::string(buf, end);
}

}  // namespace

command rank_command() {
  return {"rank",
          "A.npy [--transform T] [--tol TOL]",
          "tubal, average and multi-rank, as JSON",
          "Prints one JSON object on standard output:\n"
          "  {\"tubal_rank\": r, \"average_rank\": a, \"multi_rank\": [r_0, ..., r_{p-1}], \"transform\": \"T\"}\n"
          "r_k is the number of singular values of transform-domain slice k above the tolerance, a the mean of\n"
          "the r_k and r their maximum (the number of nonzero singular tubes). The default tolerance is\n"
          "max(m, n) * eps * (largest singular value of all slices), eps of A's precision.",
          {"A.npy"},
          {transform_option(), {"tol", 0, "TOL", "absolute tolerance on the singular values (>= 0)", false}},
          [](const invocation& inv, std::ostream& out) {
            const double tol =
                inv.has("tol") ? parse_real(inv, "tol", 0.0, std::numeric_limits<double>::max(), false) : -1.0;
            check_transform_spelling(inv);
            const std::string& file = inv.input(0);
            with_input(inv, file, [&](const auto& a, const auto& l, const transform_choice& t) {
              const rank_info r = about(file, [&] { return ranks(a, l, tol); });
              out << "{\"tubal_rank\": " << r.tubal_rank << ", \"average_rank\": " << json_number(r.average_rank)
                  << ", \"multi_rank\": [";
              for (std::size_t k = 0; k < r.multi_rank.size(); ++k) out << (k ? ", " : "") << r.multi_rank[k];
              out << "], \"transform\": " << json_string(t.spec) << "}\n";
            });
          }};
}

}  // namespace tprod::cli
