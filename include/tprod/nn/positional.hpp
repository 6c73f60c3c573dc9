// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file positional.hpp
/// @brief Slice-aware sinusoidal positional encoding (paper 000, Def. 13 and Remark 4) with fixed or learnable
/// frequency scales α_k, and the learned absolute positional tensor (paper 000 §5.4, paper 001 §5.3).
///
/// 𝒫(t, j, k) = sin(t·ω_j·α_k) for odd j and cos(t·ω_j·α_k) for even j (1-based j), with
/// ω_j = 10000^(−2⌊(j−1)/2⌋/d_s); positions run t = 1…T as in the paper (`first_position` changes that;
/// 0 gives the usual 0-based sinusoidal table). With p = 1 and α = 1 this is the standard encoding.
/// α strategies (Remark 4): standard α_k = 1, linear α_k = k/p, exponential α_k = 2^((k−1)/(p−1)) (1 if p = 1),
/// harmonic α_k = k, and learnable α_k (p trainable scalars, initialized from one of the others).
/// A batch (B·T rows, row b·T + t) gets the same 𝒫 added to every sequence.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/core/random.hpp"
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

enum class alpha_strategy { standard, linear, exponential, harmonic };

/// @brief The strategy's name: "standard", "linear", "exponential" or "harmonic".
constexpr std::string_view name(alpha_strategy s) {
  switch (s) {
    case alpha_strategy::linear: return "linear";
    case alpha_strategy::exponential: return "exponential";
    case alpha_strategy::harmonic: return "harmonic";
    default: return "standard";
  }
}

/// @brief The strategy called `text`. @throws shape_error listing the names for anything else.
inline alpha_strategy alpha_strategy_from(std::string_view text) {
  for (auto s : {alpha_strategy::standard, alpha_strategy::linear, alpha_strategy::exponential, alpha_strategy::harmonic})
    if (name(s) == text) return s;
  throw shape_error("nn::alpha_strategy_from: '" + std::string(text) +
                    "' is not an α strategy (standard, linear, exponential, harmonic)");
}

/// @brief α_1…α_p of a fixed strategy (Remark 4).
/// @throws shape_error when p = 0.
inline std::vector<double> alphas(alpha_strategy s, std::size_t p) {
  TPROD_EXPECTS(p > 0, "nn::alphas: p must be positive");
  std::vector<double> a(p);
  for (std::size_t i = 0; i < p; ++i) {
    const double k = double(i + 1);
    switch (s) {
      case alpha_strategy::standard:
        a[i] = 1.0;
        break;
      case alpha_strategy::linear:
        a[i] = k / double(p);
        break;
      case alpha_strategy::exponential:
        a[i] = p == 1 ? 1.0 : std::exp2((k - 1) / double(p - 1));
        break;
      case alpha_strategy::harmonic:
        a[i] = k;
        break;
    }
  }
  return a;
}

namespace detail {
/// ω_j = 10000^(−2⌊j/2⌋/d_s) for the 0-based feature index j.
inline double pe_frequency(std::size_t j, std::size_t ds) {
  return std::pow(10000.0, -2.0 * double(j / 2) / double(ds));
}
}  // namespace detail

/// @brief The T×d_s×p table 𝒫 for the scales α (one per slice), positions first_position, first_position+1, ….
/// @throws shape_error when α is empty or T, d_s is zero.
template <std::floating_point T>
tensor3<T> positional_encoding(std::size_t length, std::size_t ds, const std::vector<double>& alpha,
                               std::size_t first_position = 1) {
  TPROD_EXPECTS(length > 0 && ds > 0 && !alpha.empty(),
                "nn::positional_encoding: T = " + std::to_string(length) + ", d_s = " + std::to_string(ds) + ", " +
                    std::to_string(alpha.size()) + " scales (all must be positive)");
  tensor3<T> pe(length, ds, alpha.size());
  for (std::size_t k = 0; k < alpha.size(); ++k)
    for (std::size_t j = 0; j < ds; ++j) {
      const double w = detail::pe_frequency(j, ds) * alpha[k];
      for (std::size_t t = 0; t < length; ++t) {
        const double arg = double(t + first_position) * w;
        pe(t, j, k) = T(j % 2 == 0 ? std::sin(arg) : std::cos(arg));
      }
    }
  return pe;
}

/// @brief The sinusoidal encoding layer: 𝒳 + 𝒫(α), α trainable when `learnable`, in memory space S.
template <std::floating_point T, memory_space S = host_space>
struct sinusoidal_positional_params {
  using memory_space_type = S;
  tensor3<T, dextents3, S> alpha;  ///< 1×1×p: α_k
  bool learnable = false;
  std::size_t first_position = 1;

  std::size_t slices() const { return alpha.p(); }
  /// α_1…α_p on the host (a copy from the device where α lives there).
  std::vector<double> alpha_values() const {
    const auto& a = detail::on_host(alpha);
    std::vector<double> v(a.p());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = double(a(0, 0, k));
    return v;
  }
  template <class F>
  void for_each(F&& f) {
    if (learnable) f("alpha", alpha);
  }
};

/// @brief α from a strategy; `learnable` makes the p scales trainable (the paper's T4-learnable).
template <std::floating_point T>
sinusoidal_positional_params<T> make_sinusoidal_positional(std::size_t p, alpha_strategy s, bool learnable = false,
                                                           std::size_t first_position = 1) {
  const auto a = alphas(s, p);
  sinusoidal_positional_params<T> prm{tensor3<T>(1, 1, p), learnable, first_position};
  for (std::size_t k = 0; k < p; ++k) prm.alpha(0, 0, k) = T(a[k]);
  return prm;
}

template <std::floating_point T, class S>
sinusoidal_positional_params<T, S> zeros_like(const sinusoidal_positional_params<T, S>& prm) {
  return {tensor3<T, dextents3, S>(1, 1, prm.slices()), prm.learnable, prm.first_position};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class S>
sinusoidal_positional_params<T, To> copy(const sinusoidal_positional_params<T, S>& prm, To to) {
  return {copy(prm.alpha, to), prm.learnable, prm.first_position};
}

/// @brief The learned absolute positional tensor 𝒫_learn ∈ ℝ^{T×d_s×p}, added once at the input, in space S.
template <std::floating_point T, memory_space S = host_space>
struct learned_positional_params {
  using memory_space_type = S;
  tensor3<T, dextents3, S> table;
  template <class F>
  void for_each(F&& f) {
    f("table", table);
  }
};

/// @brief 𝒫_learn with entries uniform in [−scale, scale].
template <std::floating_point T>
learned_positional_params<T> make_learned_positional(std::size_t length, std::size_t ds, std::size_t p,
                                                     std::uint64_t seed, T scale = T(0.02)) {
  learned_positional_params<T> prm{random_tensor3<T>(length, ds, p, seed)};
  prm.table *= scale;
  return prm;
}

template <std::floating_point T, class S>
learned_positional_params<T, S> zeros_like(const learned_positional_params<T, S>& prm) {
  return {tensor3<T, dextents3, S>(prm.table.m(), prm.table.n(), prm.table.p())};
}

template <memory_space To, std::floating_point T, class S>
learned_positional_params<T, To> copy(const learned_positional_params<T, S>& prm, To to) {
  return {copy(prm.table, to)};
}

namespace detail {
template <class T, class S>
std::size_t check_positional(const tensor3<T, dextents3, S>& x, std::size_t batch, std::size_t ds, std::size_t p,
                             const char* who) {
  TPROD_EXPECTS(batch > 0 && x.m() % batch == 0 && x.n() == ds && x.p() == p,
                std::string(who) + ": input " + x.shape() + " is not (B*T) x " + std::to_string(ds) + " x " +
                    std::to_string(p) + " with B = " + std::to_string(batch));
  return x.m() / batch;
}
/// out = x + pe's first T rows on every sequence of the batch (pe: T'×n×p with T' ≥ T, x: (B·T)×n×p).
template <class T, class S>
void add_per_sequence(const tensor3<T, dextents3, S>& x, const tensor3<T, dextents3, S>& pe, std::size_t batch,
                      tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, x);
  const auto sys = tprod::detail::system_of<S>();
  copy(sys, x.dynamic_view(), out.dynamic_view());
  const std::size_t len = x.m() / batch;
  copy_sequence_rows(sys, pe.dynamic_view(), {0, 0, len}, out.dynamic_view(), {len, 0, len}, batch, true);
}
/// Σ_b of the rows of every sequence: the T×n×p gradient of a table added to each.
template <class T, class S>
tensor3<T, dextents3, S> sum_per_sequence(const tensor3<T, dextents3, S>& d_out, std::size_t batch) {
  const std::size_t len = d_out.m() / batch;
  tensor3<T, dextents3, S> sum(len, d_out.n(), d_out.p(), uninitialized);
  sum_sequence_rows(tprod::detail::system_of<S>(), d_out.dynamic_view(), {len, 0, len}, batch, sum.dynamic_view());
  return sum;
}
}  // namespace detail

/// @brief 𝒳_pos = 𝒳 + 𝒫(α) for a batch of `batch` sequences (𝒳 is (B·T)×d_s×p); 𝒫 is computed on the host and
/// copied to 𝒳's memory space.
/// @throws shape_error when the rows are not a multiple of batch or p differs from the number of scales.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> positional_forward(const sinusoidal_positional_params<T, S>& prm,
                                            const tensor3<T, dextents3, S>& x, std::size_t batch) {
  const std::size_t len = detail::check_positional(x, batch, x.n(), prm.slices(), "nn::positional_forward");
  tensor3<T, dextents3, S> out;
  detail::add_per_sequence(
      x, detail::to_space<S>(positional_encoding<T>(len, x.n(), prm.alpha_values(), prm.first_position)), batch, out);
  return out;
}

/// @brief Backward: d𝒳 = d𝒴 (returned by the caller unchanged) and, when learnable,
/// dα_k = Σ_{t,j} G(t, j, k)·∂𝒫(t,j,k)/∂α_k with G = Σ_b d𝒴(b-th sequence) (summed in 𝒳's space, finished on the
/// host), ∂sin(tωα)/∂α = tω·cos(tωα), ∂cos(tωα)/∂α = −tω·sin(tωα).
template <std::floating_point T, memory_space S>
sinusoidal_positional_params<T, S> positional_backward(const sinusoidal_positional_params<T, S>& prm,
                                                       const tensor3<T, dextents3, S>& d_out, std::size_t batch) {
  const std::size_t len = detail::check_positional(d_out, batch, d_out.n(), prm.slices(), "nn::positional_backward");
  auto g = zeros_like(prm);
  if (!prm.learnable) return g;
  const std::size_t ds = d_out.n();
  const auto summed = detail::sum_per_sequence(d_out, batch);
  const auto& sum = detail::on_host(summed);
  const auto alpha = prm.alpha_values();
  tensor3<T> d_alpha(1, 1, prm.slices());
  for (std::size_t k = 0; k < prm.slices(); ++k) {
    double acc = 0;
    for (std::size_t j = 0; j < ds; ++j) {
      const double w = detail::pe_frequency(j, ds);
      for (std::size_t t = 0; t < len; ++t) {
        const double pos = double(t + prm.first_position), arg = pos * w * alpha[k];
        const double dp = j % 2 == 0 ? pos * w * std::cos(arg) : -pos * w * std::sin(arg);
        acc += double(sum(t, j, k)) * dp;
      }
    }
    d_alpha(0, 0, k) = T(acc);
  }
  g.alpha = detail::to_space<S>(std::move(d_alpha));
  return g;
}

/// @brief 𝒳 + 𝒫_learn(1…T) on every sequence: the table's first T rows for sequences of length T, which may be
/// shorter than the table (a GPT-2 table holds 1024 positions; its prompts are shorter).
/// @throws shape_error when the sequences are longer than the table or the widths differ.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> positional_forward(const learned_positional_params<T, S>& prm,
                                            const tensor3<T, dextents3, S>& x, std::size_t batch) {
  const std::size_t len = detail::check_positional(x, batch, prm.table.n(), prm.table.p(), "nn::positional_forward");
  TPROD_EXPECTS(len <= prm.table.m(), "nn::positional_forward: sequences of length " + std::to_string(len) +
                                          " but the learned table is " + prm.table.shape());
  tensor3<T, dextents3, S> out;
  detail::add_per_sequence(x, prm.table, batch, out);
  return out;
}

/// @brief Backward of the learned table: d𝒫(t) = Σ_b d𝒴(b-th sequence, t) for the T positions used (summed in
/// increasing b), 0 for the table's later rows.
template <std::floating_point T, memory_space S>
learned_positional_params<T, S> positional_backward(const learned_positional_params<T, S>& prm,
                                                    const tensor3<T, dextents3, S>& d_out, std::size_t batch) {
  const std::size_t len =
      detail::check_positional(d_out, batch, prm.table.n(), prm.table.p(), "nn::positional_backward");
  TPROD_EXPECTS(len <= prm.table.m(), "nn::positional_backward: sequences of length " + std::to_string(len) +
                                          " but the learned table is " + prm.table.shape());
  auto sum = detail::sum_per_sequence(d_out, batch);
  if (len == prm.table.m()) return {std::move(sum)};
  auto g = zeros_like(prm);
  copy_sequence_rows(tprod::detail::system_of<S>(), std::as_const(sum).dynamic_view(), {0, 0, len},
                     g.table.dynamic_view(), {0, 0, len}, 1, false);
  return g;
}

}  // namespace tprod::nn
