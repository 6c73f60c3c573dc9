// SPDX-License-Identifier: Apache-2.0
// tprod svd and tprod rank: the two commands built on the slice SVDs, which compute in double precision
// (factorizations.hpp).
//   tprod svd A.npy (-o DIR | --prefix PREFIX) [--transform T] [--rank K | --energy G]: the L-SVD, written as
//   DIR/{U,S,V}.npy or PREFIX_{U,S,V}.npy.
//   tprod rank A.npy [--transform T] [--tol TOL]: tubal, average and multi-rank as one JSON object.
#include <algorithm>
#include <iostream>
#include <limits>

#include "factorizations.hpp"

namespace tprod::cli {

command svd_command() {
  return {"svd",
          "A.npy (-o DIR | --prefix PREFIX) [--transform T] [--rank K | --energy G]",
          "A = U *_L S *_L V^T, the L-SVD",
          "Writes U.npy, S.npy and V.npy into the folder DIR (or PREFIX_U.npy, ...) with A = U *_L S *_L V^T\n"
          "(economy size:\n"
          "U (m, r, p), S (r, r, p), V (n, r, p), r = min(m, n)); U and V are L-orthogonal, S is f-diagonal.\n"
          "--rank K keeps the K largest singular values of every transform-domain slice (r = K <= min(m, n)).\n"
          "--energy G keeps the smallest multi-rank holding at least the fraction G of the energy ||L(A)||_F^2\n"
          "(r = the largest kept slice rank; discarded singular values are zero in S).\n"
          "The factors have A's dtype; real under dft for real A. All three files are replaced together, and\n"
          "standard error says where they were written.\n"
          "Prints one JSON object on standard output:\n"
          "  {\"relative_error\": e, \"compression_ratio\": c, \"tubal_rank\": r, \"multi_rank\": [r_0, ..., r_{p-1}]}\n"
          "e = ||A - U *_L S *_L V^T||_F / ||A||_F, c = m n p / (sum_k r_k (m + n + 1)), the numbers the truncated\n"
          "factors store, r_k the singular values kept in transform-domain slice k.",
          {"A.npy"},
          {output_dir_option("U.npy, S.npy and V.npy"), output_prefix_option("U.npy, S.npy and V.npy"),
           transform_option(), max_condition_option(),
           {"rank", 0, "K", "truncate to tubal rank K", false},
           {"energy", 0, "G", "truncate to the energy fraction G, 0 < G <= 1", false}},
          [](const invocation& inv, std::ostream& json) {
            if (inv.has("rank") && inv.has("energy"))
              throw usage_error(inv.prefix() + "--rank and --energy exclude each other");
            const std::size_t k = inv.has("rank") ? parse_count(inv, "rank") : 0;
            const double gamma = inv.has("energy") ? parse_real(inv, "energy", 0.0, 1.0, true) : 0.0;
            check_transform_spelling(inv);
            const std::string& file = inv.input(0);
            output_set outputs(inv);
            with_input_in_double(inv, file, [&](const auto& a, const transform_choice& t, const tensor_header& h) {
              const auto r = about(file, [&] { return lsvd(a, t, {k, gamma}); });
              staged_outputs out;
              out.add(outputs.file("U"), r.u, h.dtype);
              out.add(outputs.file("S"), r.s, h.dtype);
              out.add(outputs.file("V"), r.v, h.dtype);
              outputs.commit(out, std::cerr);
              json << "{\"relative_error\": " << json_number(r.relative_error)
                   << ", \"compression_ratio\": " << json_number(r.compression_ratio) << ", \"tubal_rank\": "
                   << *std::max_element(r.multi_rank.begin(), r.multi_rank.end())
                   << ", \"multi_rank\": " << json_counts(r.multi_rank) << "}\n";
            });
          }};
}

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
          {transform_option(), max_condition_option(), {"tol", 0, "TOL", "absolute tolerance on the singular values (>= 0)", false}},
          [](const invocation& inv, std::ostream& out) {
            const double tol =
                inv.has("tol") ? parse_real(inv, "tol", 0.0, std::numeric_limits<double>::max(), false) : -1.0;
            check_transform_spelling(inv);
            const std::string& file = inv.input(0);
            with_input_in_double(inv, file, [&](const auto& a, const transform_choice& t, const tensor_header& h) {
              const double epsilon = io::is_double_dtype(h.dtype) ? std::numeric_limits<double>::epsilon()
                                                                  : std::numeric_limits<float>::epsilon();
              const rank_info r = about(file, [&] { return lranks(a, t, tol, epsilon); });
              out << "{\"tubal_rank\": " << r.tubal_rank << ", \"average_rank\": " << json_number(r.average_rank)
                  << ", \"multi_rank\": " << json_counts(r.multi_rank) << ", \"transform\": " << json_string(t.spec)
                  << "}\n";
            });
          }};
}

}  // namespace tprod::cli
