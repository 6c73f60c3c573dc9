#pragma once
// The library's Eigen-heavy kernels for the four scalars, instantiated once in tests/test_kernels.cpp and
// declared extern here, so that each test file does not instantiate and compile them again.
#include "tprod/tprod.hpp"

namespace tprod::test_kernels {
template <class S> using matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
}

#define TPROD_TEST_FOR_EACH_KERNEL(X)                                                                              \
  X(TPROD_TEST_FACEWISE(float));                                                                                   \
  X(TPROD_TEST_FACEWISE(double));                                                                                  \
  X(TPROD_TEST_FACEWISE(std::complex<float>));                                                                     \
  X(TPROD_TEST_FACEWISE(std::complex<double>));                                                                    \
  X(TPROD_TEST_TUBE_KERNEL(float, float, float));                                                                  \
  X(TPROD_TEST_TUBE_KERNEL(double, double, double));                                                               \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<float>, std::complex<float>, std::complex<float>));                        \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<double>, std::complex<double>, std::complex<double>));                     \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<float>, float, std::complex<float>));                                      \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<double>, double, std::complex<double>));                                   \
  X(TPROD_TEST_TUBE_KERNEL(float, std::complex<float>, std::complex<float>));                                      \
  X(TPROD_TEST_TUBE_KERNEL(double, std::complex<double>, std::complex<double>));                                   \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<float>, std::complex<float>, float));                                      \
  X(TPROD_TEST_TUBE_KERNEL(std::complex<double>, std::complex<double>, double))

// The Eigen decompositions behind the slice factorizations, for one scalar: about 75 s of compile time per scalar
// at -O0, so each is instantiated in its own translation unit (tests/test_decompositions_*.cpp). (Not JacobiSVD,
// which BDCSVD uses inside: declaring it extern costs every test file 1.2 s per scalar, more than it saves.)
#define TPROD_TEST_DECOMPOSITIONS(X, S)                                                                            \
  X(template class Eigen::BDCSVD<tprod::test_kernels::matrix<S>>);                                                 \
  X(template class Eigen::HouseholderQR<tprod::test_kernels::matrix<S>>);                                          \
  X(template class Eigen::PartialPivLU<tprod::test_kernels::matrix<S>>)

#define TPROD_TEST_TUBE_KERNEL(TIn, S, TOut)                                                                       \
  template void tprod::backend::cpu::apply_along_tubes<TIn, S, TOut>(                                              \
      tprod::tensor3_view<const TIn>, const tprod::detail::dense_matrix<S>&, tprod::tensor3_view<TOut>, std::size_t)
#define TPROD_TEST_FACEWISE(T)                                                                                     \
  template void tprod::backend::cpu::facewise<T>(tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,        \
                                                 tprod::tensor3_view<T>, std::size_t)

#ifndef TPROD_TEST_KERNELS_DEFINE
#define TPROD_TEST_EXTERN(decl) extern decl
TPROD_TEST_FOR_EACH_KERNEL(TPROD_TEST_EXTERN);
TPROD_TEST_DECOMPOSITIONS(TPROD_TEST_EXTERN, float);
TPROD_TEST_DECOMPOSITIONS(TPROD_TEST_EXTERN, double);
TPROD_TEST_DECOMPOSITIONS(TPROD_TEST_EXTERN, std::complex<float>);
TPROD_TEST_DECOMPOSITIONS(TPROD_TEST_EXTERN, std::complex<double>);
#undef TPROD_TEST_EXTERN
#endif
