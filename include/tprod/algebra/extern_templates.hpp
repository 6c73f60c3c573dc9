// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file extern_templates.hpp
/// @brief The algebra's heavy instantiations for the common scalars and transforms, declared `extern template`
/// when `TPROD_EXTERN_TEMPLATES` is defined, so that a program compiles none of them and links them from the
/// compiled library `tprod::instances` (which defines the macro for whoever links it). Without the macro this
/// header declares nothing and tprod stays header-only.
///
/// Covered, for T ∈ {float, double, std::complex<float>, std::complex<double>}:
/// - the CPU kernels: slice GEMMs (`backend::cpu::facewise`), tube GEMMs (`apply_along_tubes`, with the mixed
///   real/complex forms), and the transforms `backend::cpu::forward`/`inverse` under dct, dft,
///   identity_transform and matrix_transform<> (real Z);
/// - Eigen's decompositions behind the slice factorizations, for the matrices of T: BDCSVD,
///   HouseholderQR, PartialPivLU (for code that calls them directly, such as the decompositions);
/// - svd, truncated_svd, energy_truncated_svd, qr, inverse and ranks of a transform-domain tensor of
///   dynamic extents under those four transforms (the forms taking a tensor and a policy call these), and
///   truncate, truncate_energy and reconstruct of their L-SVDs.
///
/// Anything else (other extents, other transforms) is instantiated in the calling program as usual.
/// The lists are X-macros taking the keyword (`extern template` or `template`); `src/instances/` applies them
/// with `template`, once per scalar. See docs/building.md, "Compile time: the instances library".
#include <complex>

#include "tprod/algebra/facewise.hpp"
#include "tprod/algebra/inverse.hpp"
#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/rank.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/algebra/svd_truncation.hpp"
#include "tprod/backend/kernels/facewise.hpp"
#include "tprod/backend/kernels/transform.hpp"
#include "tprod/backend/cpu/tube_gemm.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/dft.hpp"
#include "tprod/transform/identity_transform.hpp"
#include "tprod/transform/matrix_transform.hpp"

// The transform kernels and the factorizations for original scalar T under transform L.
#define TPROD_ALGEBRA_TRANSFORM_INSTANCES(TPROD_KW, T, L)                                                            \
  TPROD_KW void tprod::backend::cpu::forward<T, L>(const L&, tprod::tensor3_view<const T>,                          \
                                                   tprod::tensor3_view<typename L::template domain_scalar<T>>,      \
                                                   const tprod::execution&);                                        \
  TPROD_KW void tprod::backend::cpu::inverse<T, L>(const L&,                                                        \
                                                   tprod::tensor3_view<const typename L::template domain_scalar<T>>, \
                                                   tprod::tensor3_view<T>, const tprod::execution&);                \
  TPROD_KW tprod::svd_result<T, L> tprod::svd<T, L, tprod::dextents3>(const tprod::transformed<T, L>&,              \
                                                                       tprod::factor_mode);                         \
  TPROD_KW tprod::svd_result<T, L> tprod::truncated_svd<T, L, tprod::dextents3>(const tprod::transformed<T, L>&,    \
                                                                                 std::size_t);                      \
  TPROD_KW tprod::svd_result<T, L> tprod::energy_truncated_svd<T, L, tprod::dextents3>(                             \
      const tprod::transformed<T, L>&, double);                                                                     \
  TPROD_KW tprod::qr_result<T, L> tprod::qr<T, L, tprod::dextents3>(const tprod::transformed<T, L>&,                \
                                                                     tprod::factor_mode);                           \
  TPROD_KW tprod::transformed<T, L> tprod::inverse<T, L, tprod::dextents3>(const tprod::transformed<T, L>&);        \
  TPROD_KW tprod::rank_info tprod::ranks<T, L, tprod::dextents3>(const tprod::transformed<T, L>&, double, double);  \
  TPROD_KW tprod::svd_result<T, L> tprod::truncate<T, L, tprod::dextents3, tprod::host_space>(                      \
      const tprod::svd_result<T, L>&, std::size_t);                                                                 \
  TPROD_KW tprod::svd_result<T, L> tprod::truncate_energy<T, L, tprod::dextents3, tprod::host_space>(               \
      const tprod::svd_result<T, L>&, double);                                                                      \
  TPROD_KW tprod::tensor3<T> tprod::reconstruct<T, L, tprod::dextents3, tprod::host_space>(                         \
      const tprod::svd_result<T, L>&);

// Everything for scalar T: the slice and tube GEMMs, Eigen's decompositions of T matrices, and the four
// transforms.
#define TPROD_ALGEBRA_INSTANCES(TPROD_KW, T)                                                                         \
  TPROD_KW void tprod::backend::cpu::facewise<T>(tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,         \
                                                 tprod::tensor3_view<T>, std::size_t);                               \
  TPROD_KW void tprod::backend::cpu::apply_along_tubes<T, T, T>(                                                     \
      tprod::tensor3_view<const T>, const tprod::detail::dense_matrix<T>&, tprod::tensor3_view<T>, std::size_t);     \
  TPROD_KW class Eigen::BDCSVD<tprod::detail::dense_matrix<T>>;                                                      \
  TPROD_KW class Eigen::HouseholderQR<tprod::detail::dense_matrix<T>>;                                               \
  TPROD_KW class Eigen::PartialPivLU<tprod::detail::dense_matrix<T>>;                                                \
  TPROD_ALGEBRA_TRANSFORM_INSTANCES(TPROD_KW, T, tprod::dct)                                                         \
  TPROD_ALGEBRA_TRANSFORM_INSTANCES(TPROD_KW, T, tprod::dft)                                                         \
  TPROD_ALGEBRA_TRANSFORM_INSTANCES(TPROD_KW, T, tprod::identity_transform)                                          \
  TPROD_ALGEBRA_TRANSFORM_INSTANCES(TPROD_KW, T, tprod::matrix_transform<>)

// The tube GEMMs mixing real R and complex C = std::complex<R> (a complex tensor under a real Z, a real tensor
// under a complex Z and back).
#define TPROD_ALGEBRA_MIXED_INSTANCES(TPROD_KW, R)                                                                   \
  TPROD_KW void tprod::backend::cpu::apply_along_tubes<std::complex<R>, R, std::complex<R>>(                         \
      tprod::tensor3_view<const std::complex<R>>, const tprod::detail::dense_matrix<R>&,                             \
      tprod::tensor3_view<std::complex<R>>, std::size_t);                                                            \
  TPROD_KW void tprod::backend::cpu::apply_along_tubes<R, std::complex<R>, std::complex<R>>(                         \
      tprod::tensor3_view<const R>, const tprod::detail::dense_matrix<std::complex<R>>&,                             \
      tprod::tensor3_view<std::complex<R>>, std::size_t);                                                            \
  TPROD_KW void tprod::backend::cpu::apply_along_tubes<std::complex<R>, std::complex<R>, R>(                         \
      tprod::tensor3_view<const std::complex<R>>, const tprod::detail::dense_matrix<std::complex<R>>&,               \
      tprod::tensor3_view<R>, std::size_t);

// The instances are compiled for one Eigen alignment, which the target architecture flags set (16 bytes for SSE,
// 32 for AVX, 64 for AVX-512); Eigen matrices allocated on one side and freed on the other must agree. A program
// compiled for another alignment than the library references a symbol that the library does not define, and
// fails to link instead of crashing.
#define TPROD_INSTANCES_ABI_NAME_(bytes) instances_built_for_eigen_align_##bytes
#define TPROD_INSTANCES_ABI_NAME(bytes) TPROD_INSTANCES_ABI_NAME_(bytes)

#if defined(TPROD_EXTERN_TEMPLATES)
namespace tprod::detail {
extern const int TPROD_INSTANCES_ABI_NAME(EIGEN_MAX_ALIGN_BYTES);
[[gnu::used]] inline const int* const instances_abi_check = &TPROD_INSTANCES_ABI_NAME(EIGEN_MAX_ALIGN_BYTES);
}  // namespace tprod::detail

TPROD_ALGEBRA_INSTANCES(extern template, float)
TPROD_ALGEBRA_INSTANCES(extern template, double)
TPROD_ALGEBRA_INSTANCES(extern template, std::complex<float>)
TPROD_ALGEBRA_INSTANCES(extern template, std::complex<double>)
TPROD_ALGEBRA_MIXED_INSTANCES(extern template, float)
TPROD_ALGEBRA_MIXED_INSTANCES(extern template, double)
#endif
