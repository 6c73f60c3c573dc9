// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_config.hpp
/// @brief The shape and options of a Transformer layer under the L-product, and the two papers' presets.
///
/// A layer of width d = p·d_s with the transform-domain LayerNorm (paper 001's Def. 5.5) runs, in the transform
/// domain, p independent standard layers of width d_s with h heads each (d_s = h·d_h) and hidden width d_ff,s
/// (paper 000, Thm. 19). With the original-domain LayerNorm (paper 000's Def. 17, as in paper000_config) the
/// attention and the FFN still split slice by slice, but each LayerNorm mixes the slices, so the layer is not p
/// independent layers (docs/nn/encoder_decoder.md). The options select:
/// - where the LayerNorm sits: after each residual sum (post-norm, paper 000 eq. 4–5) or before each
///   sublayer (pre-norm, paper 001 eq. 5.9–5.10);
/// - which LayerNorm: paper 000's Def. 17 in the original domain, or paper 001's Def. 5.5 in the transform
///   domain — in which case the whole layer runs in the transform domain (one L in, one L⁻¹ out);
/// - which attention: paper 000's spectral L-MHA or paper 001's t-Softmax reading (attention_variant);
/// - the FFN activation and whether the projections carry biases (paper 000: yes; paper 001: no).
#include <cstddef>
#include <string>

#include "tprod/core/error.hpp"
#include "tprod/nn/activation.hpp"
#include "tprod/nn/attention_kinds.hpp"
#include "tprod/nn/layer_norm.hpp"

namespace tprod::nn {

enum class norm_placement {
  post,  ///< 𝒳' = LN(𝒳 + F(𝒳)) (paper 000 eq. 4–8)
  pre    ///< 𝒳' = 𝒳 + F(LN(𝒳)) (paper 001 eq. 5.9–5.10)
};

struct layer_config {
  std::size_t width = 0;   ///< d_s, the slice width
  std::size_t slices = 1;  ///< p
  std::size_t heads = 1;   ///< h, heads per slice
  std::size_t hidden = 0;  ///< d_ff,s, the FFN's hidden width per slice
  activation act = activation::relu;
  bool bias = true;
  norm_placement placement = norm_placement::post;
  layer_norm_kind norm = layer_norm_kind::original_domain;
  attention_variant attention = attention_variant::spectral;
  double eps = 1e-5;

  std::size_t model_width() const { return width * slices; }  ///< d = p·d_s

  /// @throws shape_error unless all sizes are positive and h divides d_s.
  void validate() const {
    TPROD_EXPECTS(width > 0 && slices > 0 && heads > 0 && hidden > 0 && width % heads == 0,
                  "nn::layer_config: d_s = " + std::to_string(width) + ", p = " + std::to_string(slices) +
                      ", h = " + std::to_string(heads) + ", d_ff,s = " + std::to_string(hidden) +
                      " (need positive sizes and h dividing d_s)");
  }
};

/// @brief Paper 000's layer for a width-d model with H heads and FFN width d_ff, folded into p slices:
/// d_s = d/p, h = H/p heads per slice (so d_h = d/H is unchanged, footnote 4), d_ff,s = d_ff/p, post-norm,
/// original-domain LayerNorm (Def. 17), spectral attention, biases. p = 1 is the standard layer.
/// @throws shape_error unless p divides d, H and d_ff.
inline layer_config paper000_config(std::size_t d, std::size_t heads, std::size_t d_ff, std::size_t p,
                                    activation act = activation::relu) {
  TPROD_EXPECTS(p > 0 && d % p == 0 && heads % p == 0 && d_ff % p == 0 && heads > 0,
                "nn::paper000_config: p = " + std::to_string(p) + " must divide d = " + std::to_string(d) +
                    ", H = " + std::to_string(heads) + " and d_ff = " + std::to_string(d_ff));
  layer_config c;
  c.width = d / p;
  c.slices = p;
  c.heads = heads / p;
  c.hidden = d_ff / p;
  c.act = act;
  c.validate();
  return c;
}

/// @brief Paper 001's TCP-ViT block for patch width d (per slice), C channels (slices), H heads per slice and
/// FFN expansion r_ff: pre-norm, transform-domain t-LayerNorm (Def. 5.5), t-Softmax attention, GELU, no biases.
inline layer_config paper001_config(std::size_t d, std::size_t channels, std::size_t heads, std::size_t r_ff) {
  layer_config c;
  c.width = d;
  c.slices = channels;
  c.heads = heads;
  c.hidden = r_ff * d;
  c.act = activation::gelu;
  c.bias = false;
  c.placement = norm_placement::pre;
  c.norm = layer_norm_kind::transform_domain;
  c.attention = attention_variant::t_softmax;
  c.validate();
  return c;
}

}  // namespace tprod::nn
