// SPDX-License-Identifier: Apache-2.0
// tprod tucker and tprod tt: Tucker and Tensor-Train decompositions of an order-N real array, computed in double
// precision (float32 data is promoted and its factors rounded back; the reported error is that of the rounded
// factors), in one translation unit because both need Eigen's BDCSVD.
//   tprod tucker X.npy -o PREFIX (--ranks R1,R2,... | --tol E) [--method hosvd|sthosvd|hooi]
//   tprod tt     X.npy -o PREFIX (--max-rank R | --eps E)
#include <cmath>
#include <iostream>
#include <limits>

#include "cli.hpp"
#include "tprod/decomp/extern_templates.hpp"  // compiled once, in tprod::instances
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"

namespace tprod::cli {

namespace {

/// A real order-N input array in double precision, with the dtype it was stored in.
struct real_array {
  ndtensor<double> x;
  io::npy_dtype dtype;
};

real_array read_real_array(const std::string& file) {
  const io::npy_array a = io::read_npy(file);
  if (io::is_complex_dtype(a.dtype()))
    throw data_error(file + ": holds " + std::string(io::dtype_name(a.dtype())) +
                     " data; the decompositions take real arrays (float32 or float64)");
  if (a.ndim() == 0) throw data_error(file + ": is a 0-dimensional array; expected an array of order N >= 1");
  const io::npy_array d = io::convert(a, io::npy_dtype::float64, file);
  return {from_column_major<double>(a.shape, d.values<double>().data(), a.size()), a.dtype()};
}

/// Rounds every element to single precision when the data came as float32, so that the error reported is that
/// of the arrays written.
void round_to(io::npy_dtype dtype, double* data, std::size_t size) {
  if (dtype == io::npy_dtype::float32)
    for (std::size_t e = 0; e < size; ++e) data[e] = double(float(data[e]));
}

void print_summary(std::ostream& out, double relative_error, std::size_t entries, std::size_t stored,
                   const std::vector<std::size_t>& ranks) {
  out << "{\"relative_error\": " << json_number(relative_error)
      << ", \"compression_ratio\": " << json_number(double(entries) / double(stored))
      << ", \"ranks\": " << json_counts(ranks) << "}\n";
}

}  // namespace

command tucker_command() {
  return {"tucker",
          "X.npy (-o DIR | --prefix PREFIX) (--ranks R1,R2,... | --tol E) [--method hosvd|sthosvd|hooi]",
          "Tucker decomposition X = G x_1 U_1 ... x_N U_N of an order-N array",
          "Writes core.npy (R_1 x ... x R_N) and factor0.npy ... factor{N-1}.npy into the folder DIR (or\n"
          "PREFIX_core.npy, PREFIX_factor0.npy, ...; factor n is\n"
          "I_n x R_n with orthonormal columns) for the real order-N array X, with X[i1, ..., iN] approximated by\n"
          "sum over r of G[r1, ..., rN] U_1[i1, r1] ... U_N[iN, rN]. --ranks gives the multilinear ranks, one per\n"
          "mode; --tol E chooses them so that ||X - Xhat||_F <= E ||X||_F. --method: hosvd (truncated HOSVD),\n"
          "sthosvd (sequentially truncated) or hooi (HOSVD-initialized alternating iteration; the default).\n"
          "Prints {\"relative_error\": e, \"compression_ratio\": c, \"ranks\": [R_1, ..., R_N]}: e is\n"
          "||X - Xhat||_F / ||X||_F of the written arrays, c the entries of X over the entries written.\n"
          "Computes in double precision; float32 input gives float32 output. All files are replaced together.",
          {"X.npy"},
          {output_dir_option("core.npy, factor0.npy, ..."), output_prefix_option("core.npy, factor0.npy, ..."),
           {"ranks", 0, "R1,R2,...", "multilinear ranks, one per mode, 1 <= R_n <= I_n", false},
           {"tol", 0, "E", "relative error bound, 0 <= E < 1", false},
           {"method", 0, "M", "hosvd, sthosvd or hooi (default hooi)", false}},
          [](const invocation& inv, std::ostream& out) {
            tucker_options options;
            if (one_of(inv, "ranks", "tol") == "ranks")
              options.ranks = parse_count_list(inv, "ranks");
            else
              options.tolerance = parse_real(inv, "tol", 0.0, std::nextafter(1.0, 0.0), false);
            const std::string method = inv.get("method").value_or("hooi");
            if (method != "hosvd" && method != "sthosvd" && method != "hooi")
              throw usage_error(inv.prefix() + "unknown method '" + method + "' (expected hosvd, sthosvd or hooi)");
            const std::string& file = inv.input(0);
            output_set outputs(inv);
            const real_array in = read_real_array(file);
            tucker_result<double> r = about(file, [&] {
              return method == "hosvd" ? hosvd(in.x, options) : method == "sthosvd" ? st_hosvd(in.x, options)
                                                                                    : hooi(in.x, options);
            });
            // The library measured the error on its double-precision reconstruction; float32 output is measured
            // again after rounding.
            double error = r.relative_error;
            if (in.dtype == io::npy_dtype::float32) {
              round_to(in.dtype, r.core.data(), r.core.size());
              for (auto& u : r.factors) round_to(in.dtype, u.data(), std::size_t(u.size()));
              error = detail::relative_difference(in.x, r.reconstruct(), detail::frobenius(in.x));
            }
            staged_outputs files;
            files.add(outputs.file("core"), in.dtype, shape_of(r.core), r.core.data());
            for (std::size_t n = 0; n < r.factors.size(); ++n)
              files.add(outputs.file("factor" + std::to_string(n)), in.dtype,
                        {std::size_t(r.factors[n].rows()), std::size_t(r.factors[n].cols())}, r.factors[n].data());
            outputs.commit(files, std::cerr);
            print_summary(out, error, in.x.size(), r.parameter_count(), r.ranks());
          }};
}

command tt_command() {
  return {"tt",
          "X.npy (-o DIR | --prefix PREFIX) (--max-rank R | --eps E)",
          "Tensor-Train decomposition (TT-SVD) of an order-N array",
          "Writes core0.npy ... core{N-1}.npy into the folder DIR (or PREFIX_core0.npy, ...) for the real\n"
          "order-N array X: core n is\n"
          "R_{n-1} x I_n x R_n with R_0 = R_N = 1, and X[i1, ..., iN] is approximated by the matrix product\n"
          "core0[:, i1, :] @ core1[:, i2, :] @ ... @ core{N-1}[:, iN, :]. --max-rank R caps every rank R_n;\n"
          "--eps E keeps the smallest ranks with ||X - TT(X)||_F <= E ||X||_F (TT-SVD, Oseledets 2011).\n"
          "Prints {\"relative_error\": e, \"compression_ratio\": c, \"ranks\": [R_0, R_1, ..., R_N]}: e is\n"
          "||X - TT(X)||_F / ||X||_F of the written cores, c the entries of X over the entries written.\n"
          "Computes in double precision; float32 input gives float32 output. All files are replaced together.",
          {"X.npy"},
          {output_dir_option("core0.npy, core1.npy, ..."), output_prefix_option("core0.npy, core1.npy, ..."),
           {"max-rank", 0, "R", "cap on every TT rank, R >= 1", false},
           {"eps", 0, "E", "relative error bound, 0 <= E < 1", false}},
          [](const invocation& inv, std::ostream& out) {
            tt_options options;
            if (one_of(inv, "max-rank", "eps") == "max-rank")
              options.max_rank = parse_count(inv, "max-rank");
            else
              options.tolerance = parse_real(inv, "eps", 0.0, std::nextafter(1.0, 0.0), false);
            const std::string& file = inv.input(0);
            output_set outputs(inv);
            const real_array in = read_real_array(file);
            tensor_train<double> tt = about(file, [&] { return tt_svd(in.x, options); });
            for (auto& core : tt.cores) round_to(in.dtype, core.data(), core.size());
            const double error = detail::relative_difference(in.x, tt.full(), detail::frobenius(in.x));
            staged_outputs files;
            for (std::size_t n = 0; n < tt.order(); ++n)
              files.add(outputs.file("core" + std::to_string(n)), in.dtype, shape_of(tt.cores[n]),
                        tt.cores[n].data());
            outputs.commit(files, std::cerr);
            print_summary(out, error, in.x.size(), tt.parameter_count(), tt.ranks());
          }};
}

}  // namespace tprod::cli
