#pragma once
// The nn layers' Eigen-heavy kernels for float and double, instantiated once in nn_kernels_{double,float}.cpp and declared
// extern here, so that each nn test file does not instantiate and compile them again (the pattern of
// tests/support/tprod_kernels.hpp; see docs/design.md). The kernels take no transform type, so these
// instantiations serve every transform the tests use.
#include "tprod/nn.hpp"
#include "tprod_kernels.hpp"

#define TPROD_NN_TEST_KERNELS(X, T)                                                                              \
  X(template void tprod::nn::detail::slice_linear_forward<T>(const tprod::tensor3<T>&, const tprod::tensor3<T>&, \
                                                             const tprod::tensor3<T>&, std::size_t, std::size_t,   \
                                                             tprod::tensor3<T>&));                               \
  X(template void tprod::nn::detail::slice_linear_backward<T>(                                                   \
      const tprod::tensor3<T>&, const tprod::tensor3<T>&, const tprod::tensor3<T>&, std::size_t, tprod::tensor3<T>*, \
      bool, tprod::tensor3<T>&, tprod::tensor3<T>&));                                                            \
  X(template void tprod::nn::detail::attention_hat_forward<T>(                                                   \
      const tprod::nn::detail::attention_weights<T>&, const tprod::nn::detail::tube_maps<T>&,                    \
      const tprod::tensor3<T>&, const tprod::tensor3<T>*, std::size_t, const tprod::nn::attention_mask&,         \
      tprod::nn::detail::attention_cache<T>&, tprod::tensor3<T>&));                                              \
  X(template void tprod::nn::detail::attention_hat_backward<T>(                                                  \
      const tprod::nn::detail::attention_weights<T>&, const tprod::nn::detail::tube_maps<T>&,                    \
      const tprod::tensor3<T>&, const tprod::tensor3<T>*, const tprod::nn::detail::attention_cache<T>&,          \
      const tprod::tensor3<T>&, tprod::nn::detail::attention_workspace<T>&, tprod::tensor3<T>&, tprod::tensor3<T>*, \
      const tprod::nn::detail::attention_weight_grads<T>&));                                                     \
  X(template void tprod::nn::detail::ffn_hat_forward<T>(const tprod::nn::detail::ffn_weights<T>&,                \
                                                        const tprod::tensor3<T>&, tprod::nn::detail::ffn_cache<T>&, \
                                                        tprod::tensor3<T>&));                                    \
  X(template void tprod::nn::detail::ffn_hat_backward<T>(                                                        \
      const tprod::nn::detail::ffn_weights<T>&, const tprod::tensor3<T>&, const tprod::nn::detail::ffn_cache<T>&, \
      const tprod::tensor3<T>&, tprod::nn::detail::ffn_workspace<T>&, tprod::tensor3<T>&, bool,                  \
      const tprod::nn::detail::ffn_weight_grads<T>&));                                                           \
  X(template void tprod::nn::layer_norm_forward<T>(const tprod::nn::layer_norm_params<T>&, const tprod::tensor3<T>&, \
                                                   tprod::tensor3<T>&, tprod::nn::layer_norm_saved<T>&));        \
  X(template void tprod::nn::layer_norm_backward<T>(const tprod::nn::layer_norm_params<T>&,                      \
                                                    const tprod::nn::layer_norm_saved<T>&, const tprod::tensor3<T>&, \
                                                    tprod::tensor3<T>&, tprod::nn::layer_norm_params<T>&));      \
  X(template void tprod::nn::detail::residual_forward<T>(                                                        \
      const tprod::nn::layer_config&, const tprod::nn::detail::tube_maps<T>&, const tprod::nn::layer_norm_params<T>&, \
      const tprod::tensor3<T>&, tprod::tensor3<T>&, tprod::nn::detail::residual_saved<T>&,                       \
      tprod::nn::detail::residual_workspace<T>&, const tprod::nn::detail::sublayer_fn<T>&));                     \
  X(template void tprod::nn::detail::residual_backward<T>(                                                       \
      const tprod::nn::layer_config&, const tprod::nn::detail::tube_maps<T>&, const tprod::nn::layer_norm_params<T>&, \
      const tprod::nn::detail::residual_saved<T>&, const tprod::tensor3<T>&, tprod::tensor3<T>&,                 \
      tprod::nn::layer_norm_params<T>&, tprod::nn::detail::residual_workspace<T>&,                               \
      const tprod::nn::detail::sublayer_fn<T>&));                                                                \
  X(template void tprod::nn::activation_forward<T>(tprod::nn::activation, const tprod::tensor3<T>&,             \
                                                   tprod::tensor3<T>&));                                         \
  X(template void tprod::nn::activation_backward<T>(tprod::nn::activation, const tprod::tensor3<T>&,            \
                                                    const tprod::tensor3<T>&, tprod::tensor3<T>&))

#ifndef TPROD_NN_TEST_KERNELS_DEFINE
#define TPROD_NN_TEST_EXTERN(decl) extern decl
TPROD_NN_TEST_KERNELS(TPROD_NN_TEST_EXTERN, double);
TPROD_NN_TEST_KERNELS(TPROD_NN_TEST_EXTERN, float);
#undef TPROD_NN_TEST_EXTERN
#endif
