// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file extern_templates.hpp
/// @brief The nn layers' heavy kernels (the CPU backend's slice GEMMs, activations and LayerNorm; the attention and
/// feed-forward blocks, residual blocks; the MPO linear layer's and tensorized spectral attention's passes) for float
/// and double, declared `extern template` when `TPROD_EXTERN_TEMPLATES` is defined (by linking `tprod::instances`),
/// so that a program compiles none of them.
/// The kernels take no transform type, so these serve every transform. Without the macro this header declares
/// nothing. With the algebra's list (tprod/algebra/extern_templates.hpp), included here. See docs/building.md.
#include "tprod/algebra/extern_templates.hpp"
#include "tprod/nn/activation.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/nn/ffn.hpp"
#include "tprod/nn/layer_norm.hpp"
#include "tprod/nn/detail/residual.hpp"
#include "tprod/nn/detail/slice_gemm.hpp"
#include "tprod/nn/linear.hpp"
#include "tprod/nn/mpo_linear.hpp"
#include "tprod/nn/spectral_attention.hpp"

#define TPROD_NN_INSTANCES(TPROD_KW, T)                                                                                \
  TPROD_KW void tprod::backend::cpu::slice_linear_forward<T>(                                                         \
      const tprod::backend::cpu::system&, tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,                  \
      tprod::tensor3_view<const T>, std::size_t, tprod::tensor3_view<T>);                                              \
  TPROD_KW void tprod::backend::cpu::slice_linear_backward<T>(                                                        \
      const tprod::backend::cpu::system&, tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,                  \
      tprod::tensor3_view<const T>, std::size_t, tprod::tensor3_view<T>, bool, tprod::tensor3_view<T>,                 \
      tprod::tensor3_view<T>);                                                                                         \
  TPROD_KW void tprod::nn::detail::attention_hat_forward<T>(                                                           \
      const tprod::nn::detail::attention_tensors<T>&, const tprod::nn::detail::transform_passes<T>&,                          \
      const tprod::tensor3<T>&, const tprod::tensor3<T>*, std::size_t, const tprod::nn::attention_mask&,               \
      tprod::nn::detail::attention_cache<T>&, tprod::tensor3<T>&);                                                     \
  TPROD_KW void tprod::nn::detail::attention_hat_backward<T>(                                                          \
      const tprod::nn::detail::attention_tensors<T>&, const tprod::nn::detail::transform_passes<T>&,                          \
      const tprod::tensor3<T>&, const tprod::tensor3<T>*, const tprod::nn::detail::attention_cache<T>&,                \
      const tprod::tensor3<T>&, tprod::nn::detail::attention_workspace<T>&, tprod::tensor3<T>&, tprod::tensor3<T>*,    \
      const tprod::nn::detail::attention_weight_grads<T>&);                                                            \
  TPROD_KW void tprod::nn::detail::ffn_hat_forward<T>(const tprod::nn::detail::ffn_weights<T>&,                        \
                                                        const tprod::tensor3<T>&, tprod::nn::detail::ffn_cache<T>&,    \
                                                        tprod::tensor3<T>&);                                           \
  TPROD_KW void tprod::nn::detail::ffn_hat_backward<T>(                                                                \
      const tprod::nn::detail::ffn_weights<T>&, const tprod::tensor3<T>&, const tprod::nn::detail::ffn_cache<T>&,      \
      const tprod::tensor3<T>&, tprod::nn::detail::ffn_workspace<T>&, tprod::tensor3<T>&, bool,                        \
      const tprod::nn::detail::ffn_weight_grads<T>&);                                                                  \
  TPROD_KW void tprod::backend::cpu::layer_norm_forward<T>(                                                           \
      const tprod::backend::cpu::system&, tprod::nn::layer_norm_kind, T, tprod::tensor3_view<const T>,                 \
      tprod::tensor3_view<const T>, tprod::tensor3_view<const T>, tprod::tensor3_view<T>, tprod::tensor3_view<T>,      \
      tprod::tensor3_view<T>, tprod::tensor3_view<T>);                                                                 \
  TPROD_KW void tprod::backend::cpu::layer_norm_backward<T>(                                                          \
      const tprod::backend::cpu::system&, tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,                  \
      tprod::tensor3_view<const T>, tprod::tensor3_view<const T>, tprod::tensor3_view<const T>,                        \
      tprod::tensor3_view<T>, tprod::tensor3_view<T>, tprod::tensor3_view<T>);                                           \
  TPROD_KW void tprod::nn::detail::residual_forward<T>(                                                                \
      const tprod::nn::layer_config&, const tprod::nn::detail::transform_passes<T>&, const tprod::nn::layer_norm_params<T>&,  \
      const tprod::tensor3<T>&, tprod::tensor3<T>&, tprod::nn::detail::residual_saved<T>&,                             \
      tprod::nn::detail::residual_workspace<T>&, const tprod::nn::detail::sublayer_fn<T>&);                            \
  TPROD_KW void tprod::nn::detail::residual_backward<T>(                                                               \
      const tprod::nn::layer_config&, const tprod::nn::detail::transform_passes<T>&, const tprod::nn::layer_norm_params<T>&,  \
      const tprod::nn::detail::residual_saved<T>&, const tprod::tensor3<T>&, tprod::tensor3<T>&,                       \
      tprod::nn::layer_norm_params<T>&, tprod::nn::detail::residual_workspace<T>&,                                     \
      const tprod::nn::detail::sublayer_fn<T>&);                                                                       \
  TPROD_KW void tprod::backend::cpu::activation_forward<T>(const tprod::backend::cpu::system&, tprod::nn::activation, \
                                                           tprod::tensor3_view<const T>, tprod::tensor3_view<T>);      \
  TPROD_KW void tprod::backend::cpu::activation_backward<T>(                                                          \
      const tprod::backend::cpu::system&, tprod::nn::activation, tprod::tensor3_view<const T>,                         \
      tprod::tensor3_view<const T>, tprod::tensor3_view<T>);                                                           \
  TPROD_KW void tprod::backend::cpu::activation_keep_derivative<T>(                                                   \
      const tprod::backend::cpu::system&, tprod::nn::activation, tprod::tensor3_view<T>, tprod::tensor3_view<T>);     \
  TPROD_KW void tprod::nn::mpo_linear_forward<T>(const tprod::nn::mpo_linear_params<T>&,                              \
                                                 const Eigen::Ref<const tprod::dense_matrix<T>>&,                     \
                                                 tprod::dense_matrix<T>&, tprod::nn::mpo_linear_saved<T>&);           \
  TPROD_KW void tprod::nn::mpo_linear_backward<T>(                                                                    \
      const tprod::nn::mpo_linear_params<T>&, const tprod::nn::mpo_linear_saved<T>&,                                  \
      const Eigen::Ref<const tprod::dense_matrix<T>>&, tprod::nn::mpo_linear_grads<T>&,                               \
      tprod::nn::mpo_linear_workspace<T>&);                                                                           \
  TPROD_KW void tprod::nn::tsa_forward<T>(                                                                            \
      const tprod::nn::tsa_params<T>&, const Eigen::Ref<const tprod::dense_matrix<T>>&, const tprod::dense_matrix<T>&, \
      const std::vector<std::size_t>&, tprod::dense_matrix<T>&, tprod::nn::tsa_saved<T>&,                             \
      tprod::nn::tsa_workspace<T>&);                                                                                  \
  TPROD_KW void tprod::nn::tsa_backward<T>(const tprod::nn::tsa_params<T>&, const tprod::nn::tsa_saved<T>&,           \
                                           const Eigen::Ref<const tprod::dense_matrix<T>>&,                           \
                                           tprod::nn::tsa_grads<T>&, tprod::nn::tsa_workspace<T>&);

#if defined(TPROD_EXTERN_TEMPLATES)
TPROD_NN_INSTANCES(extern template, float)
TPROD_NN_INSTANCES(extern template, double)
#endif
