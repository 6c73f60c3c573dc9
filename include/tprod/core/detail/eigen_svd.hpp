// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file eigen_svd.hpp
/// @brief Eigen's SVDs (divide-and-conquer, and one-sided Jacobi) with their U/V options fixed at compile time where
/// Eigen takes them so.
///
/// Eigen 5 (3.4.90 on) takes the options as the second template argument, `BDCSVD<M, ComputeThinU>`, and
/// deprecates the run-time flags of `BDCSVD<M>(x, ComputeThinU)`; Eigen 3.4.0 has only the run-time form (its
/// JacobiSVD's second argument is the QR preconditioner). Both compute the same factorization: `bdc_svd<Options>(x)`
/// and `jacobi_svd<Options>(x)` pick the form the Eigen in use has.
#include <Eigen/SVD>

namespace tprod::detail {

template <class S> using svd_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

#if EIGEN_VERSION_AT_LEAST(3, 4, 90)
template <class S, int Options> using bdc_svd_t = Eigen::BDCSVD<svd_matrix<S>, Options>;
template <class S, int Options> using jacobi_svd_t = Eigen::JacobiSVD<svd_matrix<S>, Options>;
/// @brief The SVD of x with the options (ComputeThinU | ComputeThinV, …) as a template argument.
template <int Options, class X>
bdc_svd_t<typename X::Scalar, Options> bdc_svd(const X& x) {
  return bdc_svd_t<typename X::Scalar, Options>(x);
}
/// @brief The one-sided Jacobi SVD of x, likewise.
template <int Options, class X>
jacobi_svd_t<typename X::Scalar, Options> jacobi_svd(const X& x) {
  return jacobi_svd_t<typename X::Scalar, Options>(x);
}
#else
template <class S, int Options> using bdc_svd_t = Eigen::BDCSVD<svd_matrix<S>>;
template <class S, int Options> using jacobi_svd_t = Eigen::JacobiSVD<svd_matrix<S>>;
/// @brief The SVD of x with the options (ComputeThinU | ComputeThinV, …) as run-time flags (Eigen 3.4.0).
template <int Options, class X>
bdc_svd_t<typename X::Scalar, Options> bdc_svd(const X& x) {
  return bdc_svd_t<typename X::Scalar, Options>(x, Options);
}
/// @brief The one-sided Jacobi SVD of x, likewise.
template <int Options, class X>
jacobi_svd_t<typename X::Scalar, Options> jacobi_svd(const X& x) {
  return jacobi_svd_t<typename X::Scalar, Options>(x, Options);
}
#endif

}  // namespace tprod::detail
