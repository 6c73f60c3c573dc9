// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file extern_templates.hpp
/// @brief The decompositions (Tucker, TT, MPO, block-term, CP, multilinear attention) for float and double,
/// declared `extern template` when `TPROD_EXTERN_TEMPLATES` is defined (by linking `tprod::instances`), so that a
/// program compiles none of them; the SVDs behind them are among the slowest Eigen code to compile. Without the
/// macro this header declares nothing. With the algebra's list (tprod/algebra/extern_templates.hpp), which
/// covers Eigen's BDCSVD and HouseholderQR of the same matrices. See docs/building.md.
#include "tprod/algebra/extern_templates.hpp"
#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/kron.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/mpo.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/decomp/multilinear_attention.hpp"
#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"
#include "tprod/decomp/unfold.hpp"

// The list below is applied with `extern template` (declaration) or `template` (definition).
#define TPROD_DECOMP_INSTANCES(TPROD_KW, T)                                                                            \
  TPROD_KW struct tprod::tucker_result<T>;                                                                             \
  TPROD_KW struct tprod::tensor_train<T>;                                                                              \
  TPROD_KW struct tprod::mpo<T>;                                                                                       \
  TPROD_KW struct tprod::block_term_result<T>;                                                                         \
  TPROD_KW struct tprod::cp_result<T>;                                                                                 \
  TPROD_KW tprod::dense_matrix<T> tprod::unfold<T>(const tprod::ndtensor<T>&, std::size_t);                            \
  TPROD_KW tprod::ndtensor<T> tprod::mode_product<T>(const tprod::ndtensor<T>&,                                        \
                                                     const Eigen::Ref<const tprod::dense_matrix<T>>&, std::size_t);    \
  TPROD_KW tprod::ndtensor<T> tprod::multi_mode_product<T>(const tprod::ndtensor<T>&,                                  \
                                                           const std::vector<tprod::dense_matrix<T>>&,                 \
                                                           const std::vector<std::size_t>&, tprod::factor_use);        \
  TPROD_KW tprod::tucker_result<T> tprod::hosvd<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);           \
  TPROD_KW tprod::tucker_result<T> tprod::st_hosvd<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);        \
  TPROD_KW tprod::tucker_result<T> tprod::hooi<T>(const tprod::ndtensor<T>&, const tprod::tucker_options&);            \
  TPROD_KW tprod::ndtensor<T> tprod::tensorize_heads<T>(const tprod::attention_weights<T>&, std::size_t);              \
  TPROD_KW tprod::attention_weights<T> tprod::detensorize_heads<T>(const tprod::ndtensor<T>&);                         \
  TPROD_KW tprod::multihead_tucker_result<T> tprod::multihead_tucker<T>(const tprod::attention_weights<T>&,            \
                                                                        std::size_t, tprod::tucker_options);           \
  TPROD_KW tprod::tensor_train<T> tprod::tt_svd<T>(const tprod::ndtensor<T>&, const tprod::tt_options&);               \
  TPROD_KW tprod::tensor_train<T> tprod::tt_round<T>(const tprod::tensor_train<T>&, const tprod::tt_options&);         \
  TPROD_KW tprod::tensor_train<T> tprod::operator+ <T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&);  \
  TPROD_KW tprod::tensor_train<T> tprod::operator- <T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&);  \
  TPROD_KW tprod::tensor_train<T> tprod::operator* <T>(T, tprod::tensor_train<T>);                                     \
  TPROD_KW double tprod::tt_inner<T>(const tprod::tensor_train<T>&, const tprod::tensor_train<T>&);                    \
  TPROD_KW double tprod::tt_norm<T>(const tprod::tensor_train<T>&);                                                    \
  TPROD_KW tprod::mpo<T> tprod::mpo_from_matrix<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,                    \
                                                   const tprod::nd_shape&, const tprod::nd_shape&,                     \
                                                   const tprod::tt_options&);                                          \
  TPROD_KW tprod::dense_matrix<T> tprod::mpo_product<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,               \
                                                        const tprod::mpo<T>&);                                         \
  TPROD_KW tprod::mpo<T> tprod::mpo_round<T>(const tprod::mpo<T>&, const tprod::tt_options&);                          \
  TPROD_KW tprod::mpo<T> tprod::qtt_from_matrix<T>(const Eigen::Ref<const tprod::dense_matrix<T>>&,                    \
                                                   tprod::tt_options);                                                 \
  TPROD_KW tprod::block_term_result<T> tprod::block_term_als<T>(const tprod::ndtensor<T>&, std::size_t,                \
                                                                const std::vector<std::size_t>&,                       \
                                                                const tprod::block_term_options&);                     \
  TPROD_KW tprod::cp_result<T> tprod::cp_als<T>(const tprod::ndtensor<T>&, std::size_t,                                \
                                                const tprod::block_term_options&);                                     \
  TPROD_KW tprod::ndtensor<T> tprod::multilinear_attention_tensor<T>(                                                  \
      const std::vector<tprod::ndtensor<T>>&, const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&,            \
      const tprod::dense_matrix<T>&);                                                                                  \
  TPROD_KW tprod::dense_matrix<T> tprod::multilinear_attention<T>(                                                     \
      const std::vector<tprod::ndtensor<T>>&, const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&,            \
      const tprod::dense_matrix<T>&, const tprod::dense_matrix<T>&);

#if defined(TPROD_EXTERN_TEMPLATES)
TPROD_DECOMP_INSTANCES(extern template, float)
TPROD_DECOMP_INSTANCES(extern template, double)
#endif
