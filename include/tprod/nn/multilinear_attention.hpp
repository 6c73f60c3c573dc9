// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file multilinear_attention.hpp
/// @brief Trainable multi-linear attention (Tensorized Transformer, paper 003 eq. 2 and Fig. 2), forward and
/// backward, as a drop-in for the self-attention of an encoder layer (encoder.hpp).
///
/// Definition (one sequence of N tokens X ∈ ℝ^{N×d}, one slice; every slice of the transform domain is the same
/// computation with its own parameters, so p = 1 with the identity transform is the paper's layer):
///   Q′ = XW_q + b_q,  K′ = XW_k + b_k,  V′ = XW_v + b_v ∈ ℝ^{N×R}       (shared by all P block terms)
///   𝒯_t = 𝒢_t ×₁ Q′ ×₂ K′ ×₃ V′ ∈ ℝ^{N×N×N},   t = 1…P
///   MultiLinear(X) = SplitConcat((1/P) Σ_t 𝒯_t)·W_O + b_O ∈ ℝ^{N×d},   W_O ∈ ℝ^{N²×d}
/// SplitConcat lays the N frontal slices 𝒯(:, :, m) side by side (the mode-1 unfolding, N×N²: column j + N·m
/// holds 𝒯(:, j, m); decomp/multilinear_attention.hpp's split_concat). The cores are superdiagonal by default —
/// 𝒢_t(r, r, r) = g_t(r), only the R entries stored, so 𝒯_t = Σ_r g_t(r)·q′_r∘k′_r∘v′_r — or full R×R×R.
///
/// Reading of W_O. Eq. 2 multiplies the N×N² matrix SplitConcat(𝒯) by W_O, so W_O has N² rows: the layer is a
/// sequence-to-sequence map of width d for one sequence length N, which is a parameter of the layer (batches
/// are padded to N; the padding is masked, below). This is the paper's definition taken literally; there are
/// no per-head splits — the P block terms, which share Q′, K′, V′, play the part of the heads. W_O's N²·d
/// entries dominate the parameter count unless N² ≪ d (multilinear_attention_parameter_count).
///
/// Contraction without 𝒯. With the mean core as an R×S matrix C (superdiagonal: S = R, C = diag(ḡ); full:
/// S = R², C = 𝒢̄_(1), column b + R·e holding 𝒢̄(:, b, e)) and Φ ∈ ℝ^{N²×S} the pairs of key and value
/// columns (superdiagonal: Φ(j + N·m, r) = K′(j, r)·V′(m, r), the Khatri–Rao product V′ ⊙ K′; full:
/// Φ(j + N·m, b + R·e) = K′(j, b)·V′(m, e), the Kronecker product V′ ⊗ K′),
///   SplitConcat(𝒯̄) = Q′·C·Φᵀ,   so   Y = Q′·(C·(Φᵀ·W_O)) + b_O,
/// evaluated right to left: Z = ΦᵀW_O (S×d, 2N²·S·d flops), H = C·Z (2R·S·d; superdiagonal: R·d), Q′·H (2N·R·d).
/// Superdiagonal: O(N²·R·d) per sequence and O(N²·R) memory for Φ, against O(N³·R) + O(N³·d) and N³ memory
/// for forming 𝒯 and SplitConcat(𝒯)·W_O. Full cores: the same order costs O(N²·R²·d) with an N²×R² Φ; the
/// layer refuses Φ larger than max_pair_entries (2²⁴ entries, 128 MiB in double) with a shape_error.
/// The backward pass runs the same chain in reverse: dQ′ = dY·Hᵀ, dC = (Q′ᵀdY)·Zᵀ, dZ = Cᵀ·Q′ᵀdY,
/// dW_O = Σ_seq Φ·dZ, dΦ = W_O·dZᵀ, and dK′, dV′ from dΦ column pair by column pair.
///
/// Masks. With key-padding lengths n_b, the rows of K′ and V′ of padded tokens (t ≥ n_b) are set to zero after
/// the projection, so every 𝒯(i, j, m) with j or m padded is zero: padded tokens contribute nothing to any
/// output, and the valid outputs do not depend on what the padded positions hold. Padded query rows get
/// outputs (from their Q′ rows) that a model ignores (mean pooling over valid tokens).
///
/// Causal mask (a decoder's; paper 003 gives eq. 2 none, this is the restriction that makes it one): output i
/// sums only the pairs of earlier or equal tokens, j ≤ i and m ≤ i,
///   Y(i, :) = q′_i · C · Z_i,   Z_i = Σ_{max(j, m) ≤ i} Φ(j + N·m, :)ᵀ W_O(j + N·m, :),
/// so that no output depends on a later token. The Z_i are prefix sums over the pairs grouped by max(j, m) = i
/// (the rows i·N … i·N + i and i + N·m for m < i), Z_i = Z_{i−1} + Φ_iᵀ W_O,i: the same 2N²·S·d flops as the
/// unmasked Z, and N times its memory (every Z_i is kept for the backward pass). Backward: with u_i = q′_i·C and
/// the suffix sums D_i = Σ_{i′ ≥ i} u_{i′}ᵀ dY(i′, :), dW_O,i = Φ_i·D_i and dΦ_i = W_O,i·D_iᵀ, dq′_i = dY(i, :)·
/// Z_iᵀ·Cᵀ and dC = Σ_i q′_iᵀ·(dY(i, :)·Z_iᵀ).
#include <cstdint>
#include <string>
#include <type_traits>

#include "tprod/nn/encoder.hpp"
#include "tprod/core/parallel.hpp"

namespace tprod::nn {

/// @brief The cores of multi-linear attention: the paper's superdiagonal ones (R entries each) or full R×R×R.
enum class multilinear_core { superdiagonal, full };

/// @brief The largest key/value pair matrix Φ (N²×S entries, S = R or R²) the layer builds per sequence.
inline constexpr std::size_t max_pair_entries = std::size_t(1) << 24;

/// @brief Parameters (transform domain, p slices): Ŵ_QKV = [Ŵ_q | Ŵ_k | Ŵ_v] d×3R×p, B̂_QKV 1×3R×p (0 rows
/// without bias), the cores R×(P·c)×p with c = 1 (superdiagonal: column t is g_t) or c = R² (full: columns
/// t·R² + b + R·e hold 𝒢_t(:, b, e)), Ŵ_O N²×d×p (row j + N·m: key j, value m), B̂_O 1×d×p (or 0 rows).
template <std::floating_point T, real_transform<T> L>
struct multilinear_attention_params {
  std::size_t terms = 1;  ///< P
  multilinear_core core = multilinear_core::superdiagonal;
  transformed<T, L> w_qkv;
  transformed<T, L> b_qkv;
  transformed<T, L> cores;
  transformed<T, L> w_o;
  transformed<T, L> b_o;

  const L& transform() const { return w_o.transform(); }
  std::size_t width() const { return w_o.n(); }  ///< d
  std::size_t slices() const { return w_o.p(); }
  std::size_t rank() const { return w_qkv.n() / 3; }  ///< R
  std::size_t length() const;                         ///< N
  /// S, the columns of the key/value pair matrix: R (superdiagonal) or R² (full)
  std::size_t pairs() const { return core == multilinear_core::full ? rank() * rank() : rank(); }
  bool has_bias() const { return b_o.m() == 1; }
  template <class F>
  void for_each(F&& f) {
    f("w_qkv", w_qkv.data());
    if (has_bias()) f("b_qkv", b_qkv.data());
    f("cores", cores.data());
    f("w_o", w_o.data());
    if (has_bias()) f("b_o", b_o.data());
  }
};

template <std::floating_point T, real_transform<T> L>
std::size_t multilinear_attention_params<T, L>::length() const {
  std::size_t n = 0;
  while ((n + 1) * (n + 1) <= w_o.m()) ++n;
  return n;
}

/// @brief Parameter count of multi-linear attention of width d for length N, rank R and P block terms over p
/// slices: p·(3dR + R·P (superdiagonal) or R³·P (full) + N²d) plus p·(3R + d) with biases.
inline std::size_t multilinear_attention_parameter_count(std::size_t d, std::size_t n, std::size_t r, std::size_t terms,
                                                         multilinear_core core, bool bias, std::size_t p = 1) {
  const std::size_t core_entries = core == multilinear_core::full ? r * r * r : r;
  return p * (3 * d * r + terms * core_entries + n * n * d + (bias ? 3 * r + d : 0));
}

/// @brief Standard multi-head attention of width d over p slices: p·(4d² + 4d) with biases, p·4d² without.
inline std::size_t multihead_attention_parameter_count(std::size_t d, bool bias, std::size_t p = 1) {
  return p * (4 * d * d + (bias ? 4 * d : 0));
}

/// @brief Random parameters: projections uniform in ±1/√d, W_O in ±1/N (fan-in N²), superdiagonal cores in
/// ±1/√R, full cores in ±1/R (fan-in R²).
/// @throws shape_error for a zero size, or a pair matrix Φ beyond max_pair_entries.
template <std::floating_point T, real_transform<T> L>
multilinear_attention_params<T, L> make_multilinear_attention_params(
    std::size_t d, std::size_t length, std::size_t rank, std::size_t terms, std::size_t p, const L& l,
    std::uint64_t seed, multilinear_core core = multilinear_core::superdiagonal, bool bias = true) {
  TPROD_EXPECTS(d > 0 && length > 0 && rank > 0 && terms > 0 && p > 0,
                "nn::make_multilinear_attention_params: width " + std::to_string(d) + ", length " +
                    std::to_string(length) + ", rank " + std::to_string(rank) + ", terms " + std::to_string(terms) +
                    " and p = " + std::to_string(p) + " must all be positive");
  const std::size_t s = core == multilinear_core::full ? rank * rank : rank;
  TPROD_EXPECTS(length * length * s <= max_pair_entries,
                "nn::make_multilinear_attention_params: the key/value pair matrix would be " +
                    std::to_string(length * length) + " x " + std::to_string(s) + ", beyond " +
                    std::to_string(max_pair_entries) + " entries (shorten N or lower R" +
                    (core == multilinear_core::full ? std::string(", or use superdiagonal cores") : std::string()) +
                    ")");
  l.check_size(p);
  const std::size_t nb = bias ? 1 : 0;
  const T a = T(1) / std::sqrt(T(d));
  const T ac = core == multilinear_core::full ? T(1) / T(rank) : T(1) / std::sqrt(T(rank));
  return {terms,
          core,
          random_transformed<T>(d, 3 * rank, p, l, a, seed),
          random_transformed<T>(nb, 3 * rank, p, l, a, seed + 1),
          random_transformed<T>(rank, terms * (s == rank ? 1 : s), p, l, ac, seed + 2),
          random_transformed<T>(length * length, d, p, l, T(1) / T(length), seed + 3),
          random_transformed<T>(nb, d, p, l, a, seed + 4)};
}

template <std::floating_point T, class L>
multilinear_attention_params<T, L> zeros_like(const multilinear_attention_params<T, L>& p) {
  return {p.terms,           p.core,           zeros_like(p.w_qkv), zeros_like(p.b_qkv), zeros_like(p.cores),
          zeros_like(p.w_o), zeros_like(p.b_o)};
}

namespace detail {

/// Forward state: [Q′ | K′ | V′] with padded K′, V′ rows zeroed, Z = ΦᵀW_O per (slice, sequence) (causal: every
/// prefix Z_i), the mean cores.
template <class T>
struct multilinear_attention_cache {
  tensor3<T> qkv;   ///< (B·N)×3R×p
  tensor3<T> z;     ///< S×d×(p·B), block k·B + b; causal: S×(N·d)×(p·B), columns i·d … i·d + d − 1 hold Z_i
  tensor3<T> core;  ///< R×S×p, C per slice
  std::size_t batch = 0;
  attention_mask mask;
  std::size_t bytes() const { return bytes_of(qkv) + bytes_of(z) + bytes_of(core); }
};

template <class T>
struct multilinear_attention_workspace {
  tensor3<T> dqkv, dz, dcore, phi;  ///< dz: dZ (causal: every D_i); dcore: one R×S per block; phi: Φ or dΦ per thread
  std::size_t bytes() const { return bytes_of(dqkv) + bytes_of(dz) + bytes_of(dcore) + bytes_of(phi); }
};

/// Threads for the blocks: the default execution's, unless the whole is too small to share.
inline std::size_t multilinear_threads(std::size_t blocks, std::size_t n, std::size_t pairs, std::size_t d) {
  return blocks * n * n * pairs * d < tprod::detail::parallel_min_macs ? 1 : default_execution().thread_count();
}

/// Φ (N²×S) of one sequence from its K′, V′ blocks (N×R).
template <class T, class MK, class MV, class Phi>
void pair_matrix(multilinear_core core, const MK& k, const MV& v, Phi&& phi) {
  const Eigen::Index n = k.rows(), r = k.cols();
  for (Eigen::Index m = 0; m < n; ++m) {
    if (core == multilinear_core::superdiagonal) {
      phi.middleRows(m * n, n) = k.array().rowwise() * v.row(m).array();
    } else {
      for (Eigen::Index e = 0; e < r; ++e) phi.block(m * n, e * r, n, r) = k * v(m, e);
    }
  }
}

/// Rows i + N·m, m = 0 … i − 1, of a matrix of N² rows (of Φ or W_O: the pairs of key i with the earlier values),
/// as a strided view (mat: any column-major Eigen matrix, map or block with direct access).
template <class M>
auto earlier_value_rows(M&& mat, Eigen::Index n, Eigen::Index i) {
  using scalar = std::remove_reference_t<decltype(*mat.data())>;  // const for a read-only view
  using dense = std::conditional_t<std::is_const_v<scalar>, const matrix<std::remove_const_t<scalar>>,
                                   matrix<std::remove_const_t<scalar>>>;
  using stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  return Eigen::Map<dense, 0, stride>(mat.data() + i, i, mat.cols(), stride(mat.outerStride(), n));
}

/// dK′, dV′ (assigned) from dΦ: the adjoint of pair_matrix.
template <class T, class MK, class MV, class DPhi, class DK, class DV>
void pair_matrix_backward(multilinear_core core, const MK& k, const MV& v, const DPhi& dphi, DK&& dk, DV&& dv) {
  const Eigen::Index n = k.rows(), r = k.cols();
  dk.setZero();
  for (Eigen::Index m = 0; m < n; ++m) {
    if (core == multilinear_core::superdiagonal) {
      const auto blk = dphi.middleRows(m * n, n).array();
      dk.array() += blk.rowwise() * v.row(m).array();
      dv.row(m) = (blk * k.array()).colwise().sum();
    } else {
      for (Eigen::Index e = 0; e < r; ++e) {
        const auto blk = dphi.block(m * n, e * r, n, r);
        dk.noalias() += blk * v(m, e);
        dv(m, e) = (blk.array() * k.array()).sum();
      }
    }
  }
}

template <class T, class L>
std::size_t multilinear_check(const multilinear_attention_params<T, L>& a, const tensor3<T>& x, std::size_t batch,
                              const char* who) {
  const std::size_t n = a.length();
  TPROD_EXPECTS(x.n() == a.width() && x.p() == a.slices(),
                std::string(who) + ": input " + x.shape() + " does not match the attention (rows x " +
                    std::to_string(a.width()) + " x " + std::to_string(a.slices()) + ")");
  TPROD_EXPECTS(batch > 0 && x.m() == batch * n,
                std::string(who) + ": " + std::to_string(x.m()) + " rows are not " + std::to_string(batch) +
                    " sequences of the layer's length N = " + std::to_string(n) +
                    " (W_O has N² rows: pad every sequence to N and pass the lengths as the mask)");
  return n;
}

}  // namespace detail

template <std::floating_point T, class L>
struct attention_state<multilinear_attention_params<T, L>> {
  using cache = detail::multilinear_attention_cache<T>;
  using workspace = detail::multilinear_attention_workspace<T>;
};

/// @brief Ŷ = MultiLinear(X̂) in the transform domain for `batch` sequences of the layer's length N; `mask`'s
/// key lengths zero the padded key and value rows (see the file comment). The (slice, sequence) blocks run on
/// the default execution's threads.
/// With mask.causal, output i sees only the pairs of tokens j, m ≤ i (the file comment).
/// @throws shape_error for an input of another width, slice count or length, or bad lengths.
template <std::floating_point T, class L>
void attention_sublayer_forward(const multilinear_attention_params<T, L>& a, const detail::transform_passes<T>&,
                                const tensor3<T>& x_hat, std::size_t batch, const attention_mask& mask,
                                detail::multilinear_attention_cache<T>& c, tensor3<T>& y_hat) {
  const char* who = "nn::multilinear_attention_forward";
  const std::size_t n = detail::multilinear_check(a, x_hat, batch, who);
  detail::check_mask<T>(mask, {a.slices(), 1, batch, n, n, a.rank()}, who);
  const auto r = Eigen::Index(a.rank()), s = Eigen::Index(a.pairs()), nn = Eigen::Index(n);
  const std::size_t p = a.slices(), d = a.width();
  const auto dd = Eigen::Index(d);
  c.batch = batch;
  c.mask = mask;
  detail::slice_linear_forward(x_hat, a.w_qkv.data(), a.b_qkv.data(), 0, 3 * a.rank(), c.qkv);
  detail::ensure_shape(c.z, std::size_t(s), mask.causal ? n * d : d, p * batch);
  detail::ensure_shape(c.core, std::size_t(r), std::size_t(s), p);
  detail::ensure_shape(y_hat, x_hat.m(), d, p);
  const T mean = T(1) / T(a.terms);
  for (std::size_t k = 0; k < p; ++k) {
    auto qkv = c.qkv.slice(k);
    for (std::size_t b = 0; b < batch && !mask.key_lengths.empty(); ++b) {
      const auto valid = Eigen::Index(mask.key_lengths[b]);
      qkv.block(Eigen::Index(b) * nn + valid, r, nn - valid, 2 * r).setZero();
    }
    auto core = c.core.slice(k);
    const auto g = a.cores.data().slice(k);
    if (a.core == multilinear_core::superdiagonal) {
      core.setZero();
      core.diagonal() = g.rowwise().sum() * mean;
    } else {
      core = g.leftCols(s);
      for (std::size_t t = 1; t < a.terms; ++t) core += g.middleCols(Eigen::Index(t) * s, s);
      core *= mean;
    }
  }
  const std::size_t threads = detail::multilinear_threads(p * batch, n, a.pairs(), d);
  tensor3<T> phi(std::size_t(nn * nn), std::size_t(s), threads, uninitialized);
  tprod::detail::parallel_for(p * batch, threads, [&](std::size_t f) {
    const std::size_t k = f / batch, rows = (f % batch) * n;
    const auto qkv = std::as_const(c.qkv).slice(k).middleRows(Eigen::Index(rows), nn);
    auto phi_f = phi.slice(tprod::detail::thread_slot(threads));
    detail::pair_matrix<T>(a.core, qkv.middleCols(r, r), qkv.middleCols(2 * r, r), phi_f);
    auto z = c.z.slice(f);
    const auto w = a.w_o.data().slice(k);
    const auto core = std::as_const(c.core).slice(k);
    auto y = y_hat.slice(k).middleRows(Eigen::Index(rows), nn);
    if (!mask.causal) {
      z.noalias() = phi_f.transpose() * w;
      const detail::matrix<T> h = core * z;
      y.noalias() = qkv.leftCols(r) * h;
    } else {  // Z_i = Z_{i−1} + Φ_iᵀ W_O,i over the pairs ending at i; Y(i, :) = (q′_i C) Z_i
      const detail::matrix<T> u = qkv.leftCols(r) * core;
      const auto cphi = std::as_const(phi_f);
      for (Eigen::Index i = 0; i < nn; ++i) {
        auto zi = z.middleCols(i * dd, dd);
        if (i == 0) zi.setZero();
        else zi = z.middleCols((i - 1) * dd, dd);
        zi.noalias() += cphi.middleRows(i * nn, i + 1).transpose() * w.middleRows(i * nn, i + 1);
        if (i > 0)
          zi.noalias() += detail::earlier_value_rows(cphi, nn, i).transpose() * detail::earlier_value_rows(w, nn, i);
        y.row(i).noalias() = u.row(i) * zi;
      }
    }
    if (a.has_bias()) y.rowwise() += a.b_o.data().slice(k).row(0);
  });
}

/// @brief Backward of attention_sublayer_forward: dX̂ and the parameter gradients (assigned into g). First per
/// (slice, sequence) block: dQ′, dZ, the block's dC and dK′, dV′ through dΦ = W_O·dZᵀ; then dW_O = Σ_b Φ_b·dZ_b
/// by column panels of W_O (so no two threads add into the same entries).
template <std::floating_point T, class L>
void attention_sublayer_backward(const multilinear_attention_params<T, L>& a, const detail::transform_passes<T>&,
                                 const tensor3<T>& x_hat, const detail::multilinear_attention_cache<T>& c,
                                 const tensor3<T>& dy_hat, detail::multilinear_attention_workspace<T>& ws,
                                 tensor3<T>& dx_hat, multilinear_attention_params<T, L>& g) {
  const std::size_t n = detail::multilinear_check(a, x_hat, c.batch, "nn::multilinear_attention_backward");
  TPROD_EXPECTS(dy_hat.m() == x_hat.m() && dy_hat.n() == a.width() && dy_hat.p() == a.slices(),
                "nn::multilinear_attention_backward: gradient " + dy_hat.shape() + " does not match the output");
  const auto r = Eigen::Index(a.rank()), s = Eigen::Index(a.pairs()), nn = Eigen::Index(n);
  const std::size_t p = a.slices(), batch = c.batch, d = a.width(), blocks = p * batch;
  const std::size_t threads = detail::multilinear_threads(blocks, n, a.pairs(), d);
  const bool causal = c.mask.causal;
  const auto dd = Eigen::Index(d);
  detail::ensure_shape_like(ws.dqkv, c.qkv);
  detail::ensure_shape_like(ws.dz, c.z);
  detail::ensure_shape(ws.dcore, std::size_t(r), std::size_t(s), blocks);
  detail::ensure_shape(ws.phi, std::size_t(nn * nn), std::size_t(s), threads);
  const auto block_rows = [&](const tensor3<T>& t, std::size_t f) {
    return t.slice(f / batch).middleRows(Eigen::Index((f % batch) * n), nn);
  };
  tprod::detail::parallel_for(blocks, threads, [&](std::size_t f) {
    const std::size_t k = f / batch, b = f % batch;
    const auto dy = block_rows(dy_hat, f), qkv = block_rows(c.qkv, f);
    const auto z = c.z.slice(f), core = c.core.slice(k);
    auto dqkv = ws.dqkv.slice(k).middleRows(Eigen::Index(b * n), nn);
    auto dz = ws.dz.slice(f);
    auto dphi = ws.phi.slice(tprod::detail::thread_slot(threads));
    const auto w = a.w_o.data().slice(k);
    if (!causal) {
      dqkv.leftCols(r).noalias() = dy * (core * z).transpose();
      const detail::matrix<T> dh = qkv.leftCols(r).transpose() * dy;
      ws.dcore.slice(f).noalias() = dh * z.transpose();
      dz.noalias() = core.transpose() * dh;
      dphi.noalias() = w * dz.transpose();
    } else {  // v_i = Z_i dY(i, :)ᵀ; D_i = D_{i+1} + u_iᵀ dY(i, :); dΦ_i = W_O,i D_iᵀ (see the file comment)
      detail::matrix<T> v(nn, s);
      for (Eigen::Index i = 0; i < nn; ++i) v.row(i).noalias() = dy.row(i) * z.middleCols(i * dd, dd).transpose();
      dqkv.leftCols(r).noalias() = v * core.transpose();
      ws.dcore.slice(f).noalias() = qkv.leftCols(r).transpose() * v;
      const detail::matrix<T> u = qkv.leftCols(r) * core;
      for (Eigen::Index i = nn; i-- > 0;) {
        auto di = dz.middleCols(i * dd, dd);
        di.noalias() = u.row(i).transpose() * dy.row(i);
        if (i + 1 < nn) di += dz.middleCols((i + 1) * dd, dd);
        const auto cdi = std::as_const(dz).middleCols(i * dd, dd);
        dphi.middleRows(i * nn, i + 1).noalias() = w.middleRows(i * nn, i + 1) * cdi.transpose();
        if (i > 0)
          detail::earlier_value_rows(dphi, nn, i).noalias() = detail::earlier_value_rows(w, nn, i) * cdi.transpose();
      }
    }
    detail::pair_matrix_backward<T>(a.core, qkv.middleCols(r, r), qkv.middleCols(2 * r, r), std::as_const(dphi),
                                    dqkv.middleCols(r, r), dqkv.middleCols(2 * r, r));
    if (!c.mask.key_lengths.empty()) {  // K′ and V′ rows of padded tokens were set to zero
      const auto valid = Eigen::Index(c.mask.key_lengths[b]);
      dqkv.block(valid, r, nn - valid, 2 * r).setZero();
    }
  });
  const auto panels = Eigen::Index(std::min<std::size_t>(d, threads));
  tprod::detail::parallel_for(p * std::size_t(panels), threads, [&](std::size_t u) {
    const std::size_t k = u / std::size_t(panels);
    const Eigen::Index panel = Eigen::Index(u) % panels, c0 = panel * Eigen::Index(d) / panels,
                       c1 = (panel + 1) * Eigen::Index(d) / panels;
    auto dw = g.w_o.data().slice(k).middleCols(c0, c1 - c0);
    dw.setZero();
    auto phi = ws.phi.slice(tprod::detail::thread_slot(threads));
    for (std::size_t b = 0; b < batch; ++b) {
      const auto qkv = block_rows(c.qkv, k * batch + b);
      detail::pair_matrix<T>(a.core, qkv.middleCols(r, r), qkv.middleCols(2 * r, r), phi);
      const auto dz = std::as_const(ws.dz).slice(k * batch + b);
      if (!causal) {
        dw.noalias() += phi * dz.middleCols(c0, c1 - c0);
        continue;
      }
      const auto cphi = std::as_const(phi);
      for (Eigen::Index i = 0; i < nn; ++i) {  // dW_O,i += Φ_i D_i, the panel's columns of D_i
        const auto di = dz.middleCols(i * dd + c0, c1 - c0);
        dw.middleRows(i * nn, i + 1).noalias() += cphi.middleRows(i * nn, i + 1) * di;
        if (i > 0) detail::earlier_value_rows(dw, nn, i).noalias() += detail::earlier_value_rows(cphi, nn, i) * di;
      }
    }
  });
  const T mean = T(1) / T(a.terms);
  for (std::size_t k = 0; k < p; ++k) {
    detail::matrix<T> dcore = std::as_const(ws.dcore).slice(k * batch);
    for (std::size_t b = 1; b < batch; ++b) dcore += std::as_const(ws.dcore).slice(k * batch + b);
    auto dg = g.cores.data().slice(k);
    for (std::size_t t = 0; t < a.terms; ++t) {
      if (a.core == multilinear_core::superdiagonal)
        dg.col(Eigen::Index(t)) = dcore.diagonal() * mean;
      else
        dg.middleCols(Eigen::Index(t) * s, s) = dcore * mean;
    }
    if (a.has_bias()) g.b_o.data().slice(k).row(0) = dy_hat.slice(k).colwise().sum();
  }
  detail::slice_linear_backward(x_hat, a.w_qkv.data(), ws.dqkv, 0, &dx_hat, false, g.w_qkv.data(), g.b_qkv.data());
}

/// @brief What multilinear_attention_backward needs.
template <std::floating_point T>
struct multilinear_attention_saved {
  tensor3<T> x_hat;
  detail::multilinear_attention_cache<T> cache;
};

/// @brief Multi-linear self-attention of `batch` sequences of the layer's length N ((B·N)×d×p), into `out`.
/// @throws shape_error as attention_sublayer_forward.
template <std::floating_point T, real_transform<T> L>
void multilinear_attention_forward(const multilinear_attention_params<T, L>& prm, const tensor3<T>& x,
                                   std::size_t batch, const attention_mask& mask, tensor3<T>& out,
                                   multilinear_attention_saved<T>& saved) {
  tensor3<T> y_hat;
  const auto tm = detail::transform_passes_of<T>(prm.transform());
  tm.forward(x, saved.x_hat);
  attention_sublayer_forward(prm, tm, saved.x_hat, batch, mask, saved.cache, y_hat);
  tm.inverse(y_hat, out);
}

template <std::floating_point T, real_transform<T> L>
std::pair<tensor3<T>, multilinear_attention_saved<T>> multilinear_attention_forward(
    const multilinear_attention_params<T, L>& prm, const tensor3<T>& x, std::size_t batch,
    const attention_mask& mask = {}) {
  std::pair<tensor3<T>, multilinear_attention_saved<T>> r;
  multilinear_attention_forward(prm, x, batch, mask, r.first, r.second);
  return r;
}

template <std::floating_point T, class L>
struct multilinear_attention_grads {
  tensor3<T> d_input;
  multilinear_attention_params<T, L> d_params;
};

/// @brief Backward pass of multilinear_attention_forward: d𝒳 and the transform-domain parameter gradients.
template <std::floating_point T, real_transform<T> L>
multilinear_attention_grads<T, L> multilinear_attention_backward(const multilinear_attention_params<T, L>& prm,
                                                                 const multilinear_attention_saved<T>& saved,
                                                                 const tensor3<T>& d_out) {
  multilinear_attention_grads<T, L> g{tensor3<T>(), zeros_like(prm)};
  detail::multilinear_attention_workspace<T> ws;
  tensor3<T> dy_hat, dx_hat;
  const auto tm = detail::transform_passes_of<T>(prm.transform());
  tm.inverse_adjoint(d_out, dy_hat);
  attention_sublayer_backward(prm, tm, saved.x_hat, saved.cache, dy_hat, ws, dx_hat, g.d_params);
  tm.adjoint(dx_hat, g.d_input);
  return g;
}

}  // namespace tprod::nn
