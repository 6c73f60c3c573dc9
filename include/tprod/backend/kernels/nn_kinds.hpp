// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file nn_kinds.hpp
/// @brief The plain types the backends' nn tasks take: the variants they compute (tprod::nn::activation and
/// tprod::nn::layer_norm_kind name these types), the ignored label and AdamW's coefficients. No includes: the
/// compiled CUDA side (backend/cuda/detail/raw.hpp) takes them too.
namespace tprod::backend::kernels {

/// ReLU(x) = max(x, 0);  GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2));  GELU_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³)));
/// tanh(x) (BERT's pooler).
enum class activation { relu, gelu, gelu_tanh, tanh };

/// Where a tensor LayerNorm puts ε (nn/layer_norm.hpp).
enum class layer_norm_kind {
  original_domain,  ///< paper 000, Def. 17: divide by √(σ² + ε), applied in the original domain
  transform_domain  ///< paper 001, Def. 5.5: divide by σ + ε, applied in the transform domain
};

/// The label a loss skips (nn::ignore_label), as PyTorch's ignore_index.
inline constexpr decltype(sizeof(0)) ignored_label = static_cast<decltype(sizeof(0))>(-1);

/// AdamW's step coefficients (backend/kernels/optimizer.hpp), in the parameters' scalar: β₁, β₂, step = η/(1−β₁ᵗ),
/// inv_c2 = 1/(1−β₂ᵗ), ε and decay = 1 − ηλ.
template <class T>
struct adamw_coefficients {
  T beta1, beta2, step, inv_c2, eps, decay;
};

}  // namespace tprod::backend::kernels
