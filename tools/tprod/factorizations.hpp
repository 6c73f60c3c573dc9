// SPDX-License-Identifier: Apache-2.0
#pragma once
// The slice factorizations of the program (tprod svd, tprod rank), computed in double precision: float32 and
// complex64 data are promoted, and their factors rounded back when written: two working scalars instead of four
// (defined in factorizations.cpp; the factorizations themselves come compiled from tprod::instances).
#include <complex>
#include <vector>

#include "cli.hpp"
#include "tprod/algebra/rank.hpp"

namespace tprod::cli {

/// Which L-SVD: untruncated (both zero), truncated to tubal rank `rank`, or to the energy fraction `energy`.
struct svd_request {
  std::size_t rank = 0;
  double energy = 0;
};

/// U, S, V of A = U *_L S *_L V^T, in the original domain, with what the truncation kept: the multi-rank over all
/// p slices, ||A - U *_L S *_L V^T||_F / ||A||_F and m n p / storage (svd_truncation.hpp).
template <class W>
struct svd_factors {
  tensor3<W> u, s, v;
  std::vector<std::size_t> multi_rank;
  double relative_error = 0;
  double compression_ratio = 1;
};

/// The working scalars: double and complex<double>.
template <class W>
concept working_scalar = std::same_as<W, double> || std::same_as<W, std::complex<double>>;

/// The L-SVD of A under the chosen transform. @throws shape_error, numerical_error.
template <working_scalar W>
svd_factors<W> lsvd(const tensor3<W>& a, const transform_choice& t, svd_request request);

/// The ranks of A under the chosen transform; a negative tol takes the default tolerance with ε = epsilon.
template <working_scalar W>
rank_info lranks(const tensor3<W>& a, const transform_choice& t, double tol, double epsilon);

}  // namespace tprod::cli
