#pragma once
/// @file instantiation.hpp
/// @brief Explicit instantiation of the decompositions for one scalar type, to compile them once per program.
///
/// Every function of this area is a template, and the SVDs behind Tucker, TT and the ALS solvers are among the
/// slowest Eigen code to compile. A program using them in several translation units can compile them once:
/// @code
///   // in every translation unit (e.g. in a project header, after including tprod/decomp.hpp):
///   TPROD_DECOMP_EXTERN_TEMPLATES(double)
///   // in exactly one .cpp file:
///   TPROD_DECOMP_INSTANTIATE(double)
/// @endcode
/// Both are optional; without them every translation unit instantiates what it calls, as usual.
#include "tprod/decomp.hpp"

// The list below is applied with `extern template` (declaration) or `template` (definition).
#define TPROD_DECOMP_INSTANTIATION_LIST(TPROD_KW, T)                                                                 \
  TPROD_KW struct tprod::tucker_result<T>;                                                                          \
  TPROD_KW struct tprod::tensor_train<T>;                                                                           \
  TPROD_KW struct tprod::mpo<T>;                                                                                    \
  TPROD_KW struct tprod::block_term_result<T>;                                                                      \
  TPROD_KW struct tprod::cp_result<T>;                                                                              \
  TPROD_KW tprod::dense_matrix<T> tprod::unfold<T>(const tprod::ndtensor<T>&, std::size_t);                          \
  TPROD_KW tprod::ndtensor<T> tprod::mode_product<T>(const tprod::ndtensor<T>&,                                      \
                                                     const Eigen::Ref<const tprod::dense_matrix<T>>&, std::size_t);  \
  TPROD_KW tprod::ndtensor<T> tprod::multi_mode_product<T>(const tprod::ndtensor<T>&,                                \
                                                           const std::vector<tprod::dense_matrix<T>>&,               \
                                                           const std::vector<std::size_t>&, tprod::factor_use);      \
  TPROD_KW tprod::tucker_result<T> tprod::hosvd<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);         \
  TPROD_KW tprod::tucker_result<T> tprod::st_hosvd<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);      \
  TPROD_KW tprod::tucker_result<T> tprod::hooi<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);          \
  TPROD_KW tprod::ndtensor<T> tprod::tensorize_heads<T>(const tprod::attention_weights<T>&, std::size_t);            \
  TPROD_KW tprod::attention_weights<T> tprod::detensorize_heads<T>(const tprod::ndtensor<T>&);                       \
  TPROD_KW tprod::multihead_tucker_result<T> tprod::multihead_tucker<T>(const tprod::attention_weights<T>&,          \
                                                                        std::size_t, tprod::tucker_options);         \
  TPROD_KW tprod::tensor_train<T> tprod::tt_svd<T>(const tprod::ndtensor<T>&, const tprod::tt_options&);             \
  TPROD_KW tprod::tensor_train<T> tprod::tt_round<T>(const tprod::tensor_train<T>&, const tprod::tt_options&);       \
  TPROD_KW tprod::tensor_train<T> tprod::operator+ <T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&); \
  TPROD_KW tprod::tensor_train<T> tprod::operator- <T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&); \
  TPROD_KW tprod::tensor_train<T> tprod::operator* <T>(T, tprod::tensor_train<T>);                                  \
  TPROD_KW double tprod::tt_inner<T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&);                 \
  TPROD_KW double tprod::tt_norm<T>(const tprod::tensor_train<T>&);                                                 \
  TPROD_KW tprod::mpo<T> tprod::mpo_from_matrix<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,                  \
                                                   const tprod::nd_shape&, const tprod::nd_shape&,                   \
                                                   const tprod::tt_options&);                                       \
  TPROD_KW tprod::dense_matrix<T> tprod::mpo_product<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,             \
                                                        const tprod::mpo<T>&);                                      \
  TPROD_KW tprod::mpo<T> tprod::mpo_round<T>(const tprod::mpo<T>&, const tprod::tt_options&);                        \
  TPROD_KW tprod::mpo<T> tprod::qtt_from_matrix<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,                  \
                                                   tprod::tt_options);                                              \
  TPROD_KW tprod::block_term_result<T> tprod::block_term_als<T>(const tprod::ndtensor<T>&, std::size_t,              \
                                                                const std::vector<std::size_t>&,                     \
                                                                const tprod::block_term_options&);                   \
  TPROD_KW tprod::cp_result<T> tprod::cp_als<T>(const tprod::ndtensor<T>&, std::size_t,                              \
                                                const tprod::block_term_options&);                                   \
  TPROD_KW tprod::ndtensor<T> tprod::multilinear_attention_tensor<T>(                                                \
      const std::vector<tprod::ndtensor<T>>&, const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&,          \
      const tprod::dense_matrix<T>&);                                                                                \
  TPROD_KW tprod::dense_matrix<T> tprod::multilinear_attention<T>(                                                   \
      const std::vector<tprod::ndtensor<T>>&, const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&,          \
      const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&);

/// @brief Declares the decompositions for scalar T as instantiated elsewhere (put in every translation unit).
#define TPROD_DECOMP_EXTERN_TEMPLATES(T) TPROD_DECOMP_INSTANTIATION_LIST(extern template, T)
/// @brief Instantiates the decompositions for scalar T (put in exactly one translation unit).
#define TPROD_DECOMP_INSTANTIATE(T) TPROD_DECOMP_INSTANTIATION_LIST(template, T)
