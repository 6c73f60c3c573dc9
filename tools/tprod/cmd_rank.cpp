// tprod rank A.npy [--transform T] [--tol TOL]: tubal, average and multi-rank as one JSON object.
#include <charconv>
#include <cstdio>
#include <limits>

#include "cli.hpp"
#include "tprod/algebra/rank.hpp"

namespace tprod::cli {

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
