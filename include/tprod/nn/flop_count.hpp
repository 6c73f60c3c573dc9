// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file flop_count.hpp
/// @brief The multiply-adds of a forward pass of each Transformer layer, from its configuration (as
/// param_count.hpp gives its parameters), and the two papers' FLOP formulas as they are printed.
///
/// Counts are multiply-adds (MACs) for one sequence of T tokens; a batch of B sequences costs B times as much,
/// FLOPs are 2·MACs, and a backward pass that computes every input gradient issues exactly twice the forward's
/// GEMM work (dW and dX for every product). With d = p·d_s, d_ff = p·d_ff,s, T tokens (T_k keys):
///   projections  Q, K, V, O:  (2T + 2T_k)·d_s²·p          (self-attention: 4T·d²/p)
///   attention    K·Qᵀ, P·V:   2T·T_k·d_s·p = 2T·T_k·d      (unchanged by the L-product)
///                dimension-wise (paper 003): 2T·d_h·d_s·p  (S over the tokens, O = V·Aᵀ; d_h = d_s/h)
///   FFN          2T·d_s·d_ff,s·p                           (d_ff = 4d: 8T·d²/p)
///   transform    T·d·log₂p per L or L⁻¹ pass                (paper 000's model of a fast DCT; 0 at p = 1)
/// Paper 000's Table 2 gives 12T·d²/p + 2T²·d + T·d·log₂p per layer: the GEMM work is exactly the layer's
/// (`gemm()`, what nn::mac_counter measures), while the table counts one transform pass where the layer makes
/// four (L and L⁻¹ around each sublayer, original-domain LayerNorm) or two (transform-domain LayerNorm). The
/// transform term is a model, not a count: tprod picks FFTW, a GEMM or a tube kernel per shape.
///
/// Paper 001's eq. 6.10–6.12 are given as printed. They count projections and attention in FLOPs (8d²N = 2·4d²N,
/// 4N²d = 2·2N²d) but the FFN in MACs (2r_ff·d²N, where its FLOPs are 4r_ff·d²N): in consistent units the
/// TCP-ViT/standard ratio is (α' + 4N)/(α'C + 4N) with α' = (8 + 4r_ff)·d, which tcp_vit_flop_ratio gives
/// (tests/nn/test_flop_count.cpp checks both against the layers' counted work).
#include <cmath>
#include <cstddef>

#include "tprod/nn/layer_config.hpp"

namespace tprod::nn {

/// @brief The multiply-adds of a layer's forward pass, by kind of work.
struct mac_breakdown {
  double projections = 0;  ///< Q, K, V and output projections
  double attention = 0;    ///< scores and their weighting of V (T² terms)
  double ffn = 0;          ///< the two FFN layers
  double transform = 0;    ///< tube transforms, modelled as T·d·log₂p per pass (paper 000)
  /// @brief The GEMM work the layer issues (what mac_counter counts).
  double gemm() const { return projections + attention + ffn; }
  double total() const { return gemm() + transform; }
  mac_breakdown& operator+=(const mac_breakdown& o) {
    projections += o.projections;
    attention += o.attention;
    ffn += o.ffn;
    transform += o.transform;
    return *this;
  }
};

/// @brief Paper 000's model of one fast transform pass over T tokens of width d = p·d_s: T·d·log₂p.
inline double transform_pass_macs(const layer_config& c, std::size_t tokens) {
  return double(tokens) * double(c.model_width()) * std::log2(double(c.slices));
}

/// @brief An L-linear layer from width d_in·p to d_out·p (p = slices), transform-domain work: T·d_in·d_out·p.
inline double linear_macs(std::size_t tokens, std::size_t in_width, std::size_t out_width, std::size_t slices) {
  return double(tokens) * double(in_width) * double(out_width) * double(slices);
}

/// @brief One attention block's transform-domain work for T query tokens and T_k key tokens (self-attention:
/// T_k = T), with the configuration's variant; the t-softmax variant adds its pass of L over the
/// probabilities (T·T_k·h tubes).
inline mac_breakdown attention_macs(const layer_config& c, std::size_t tokens, std::size_t key_tokens) {
  const double ds = double(c.width), p = double(c.slices), t = double(tokens), tk = double(key_tokens);
  mac_breakdown m;
  m.projections = (2 * t + 2 * tk) * ds * ds * p;
  m.attention = c.attention == attention_variant::dimension_wise ? 2 * t * (ds / double(c.heads)) * ds * p
                                                                 : 2 * t * tk * ds * p;
  if (c.attention == attention_variant::t_softmax) m.transform = t * tk * double(c.heads) * p * std::log2(p);
  return m;
}
/// @brief Self-attention over T tokens.
inline mac_breakdown attention_macs(const layer_config& c, std::size_t tokens) {
  return attention_macs(c, tokens, tokens);
}

/// @brief The FFN (two L-linear layers) over T tokens, transform-domain work.
inline mac_breakdown ffn_macs(const layer_config& c, std::size_t tokens) {
  mac_breakdown m;
  m.ffn = 2 * linear_macs(tokens, c.width, c.hidden, c.slices);
  return m;
}

/// @brief An encoder layer: self-attention and FFN, and its transform passes over the T tokens: L and L⁻¹
/// around each sublayer with the original-domain LayerNorm (4), one L in and one L⁻¹ out with the
/// transform-domain one (2).
inline mac_breakdown encoder_layer_macs(const layer_config& c, std::size_t tokens) {
  auto m = attention_macs(c, tokens);
  m += ffn_macs(c, tokens);
  m.transform += (c.norm == layer_norm_kind::original_domain ? 4 : 2) * transform_pass_macs(c, tokens);
  return m;
}
/// @brief A decoder layer over T tokens with an encoder output of T_src tokens: self-attention,
/// cross-attention, FFN, the L of the encoder output, and the passes over the T tokens (6 or 2, as above).
inline mac_breakdown decoder_layer_macs(const layer_config& c, std::size_t tokens, std::size_t source_tokens) {
  auto m = attention_macs(c, tokens);
  m += attention_macs(c, tokens, source_tokens);
  m += ffn_macs(c, tokens);
  m.transform += (c.norm == layer_norm_kind::original_domain ? 6 : 2) * transform_pass_macs(c, tokens) +
                 transform_pass_macs(c, source_tokens);
  return m;
}
/// @brief A stack of `layers` encoder layers (LayerNorms issue no GEMM work: they are elementwise passes).
inline mac_breakdown encoder_macs(const layer_config& c, std::size_t tokens, std::size_t layers) {
  auto m = encoder_layer_macs(c, tokens);
  const double n = double(layers);
  return {m.projections * n, m.attention * n, m.ffn * n, m.transform * n};
}

/// @brief Paper 000, Table 2, as printed: 12T·d²/p + 2T²·d + T·d·log₂p multiply-adds per layer
/// (d_ff = 4d; p = 1 is the standard layer, without the transform term).
inline double paper000_layer_macs(std::size_t tokens, std::size_t d, std::size_t p) {
  const double t = double(tokens), dd = double(d), pp = double(p);
  return 12 * t * dd * dd / pp + 2 * t * t * dd + t * dd * std::log2(pp);
}

/// @brief Paper 001, F_layer(N, d) = (8d² + 2r_ff·d²)N + 4N²d, as printed (mixed units, see the file comment).
inline double paper001_layer_flops(std::size_t tokens, std::size_t d, std::size_t r_ff) {
  const double n = double(tokens), dd = double(d);
  return (8 * dd * dd + 2 * double(r_ff) * dd * dd) * n + 4 * n * n * dd;
}
/// @brief Paper 001, eq. 6.10 without its O(N·d·C·log C) transform term: C·F_layer(N, d).
inline double paper001_tcp_vit_layer_flops(std::size_t tokens, std::size_t d, std::size_t channels,
                                           std::size_t r_ff) {
  return double(channels) * paper001_layer_flops(tokens, d, r_ff);
}
/// @brief Paper 001, eq. 6.11: F_layer(N, d·C), the standard layer of width dC.
inline double paper001_std_layer_flops(std::size_t tokens, std::size_t d, std::size_t channels, std::size_t r_ff) {
  return paper001_layer_flops(tokens, d * channels, r_ff);
}
/// @brief Paper 001, eq. 6.12 as printed: (α + 4N)/(αC + 4N), α = (8 + 2r_ff)·d.
inline double paper001_flop_ratio(std::size_t tokens, std::size_t d, std::size_t channels, std::size_t r_ff) {
  const double alpha = (8 + 2 * double(r_ff)) * double(d), n = double(tokens);
  return (alpha + 4 * n) / (alpha * double(channels) + 4 * n);
}
/// @brief The TCP-ViT/standard ratio of the layers' actual work (eq. 6.12 with the FFN in FLOPs like the rest):
/// (α' + 4N)/(α'C + 4N), α' = (8 + 4r_ff)·d. Equals encoder_layer_macs(TCP-ViT).gemm() /
/// encoder_layer_macs(standard).gemm().
inline double tcp_vit_flop_ratio(std::size_t tokens, std::size_t d, std::size_t channels, std::size_t r_ff) {
  const double alpha = (8 + 4 * double(r_ff)) * double(d), n = double(tokens);
  return (alpha + 4 * n) / (alpha * double(channels) + 4 * n);
}

}  // namespace tprod::nn
