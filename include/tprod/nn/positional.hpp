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
#include <vector>

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

/// @brief The sinusoidal encoding layer: 𝒳 + 𝒫(α), α trainable when `learnable`.
template <std::floating_point T>
struct sinusoidal_positional_params {
  tensor3<T> alpha;  ///< 1×1×p: α_k
  bool learnable = false;
  std::size_t first_position = 1;

  std::size_t slices() const { return alpha.p(); }
  std::vector<double> alpha_values() const {
    std::vector<double> a(alpha.p());
    for (std::size_t k = 0; k < a.size(); ++k) a[k] = double(alpha(0, 0, k));
    return a;
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

template <std::floating_point T>
sinusoidal_positional_params<T> zeros_like(const sinusoidal_positional_params<T>& prm) {
  return {tensor3<T>(1, 1, prm.slices()), prm.learnable, prm.first_position};
}

/// @brief The learned absolute positional tensor 𝒫_learn ∈ ℝ^{T×d_s×p}, added once at the input.
template <std::floating_point T>
struct learned_positional_params {
  tensor3<T> table;
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

template <std::floating_point T>
learned_positional_params<T> zeros_like(const learned_positional_params<T>& prm) {
  return {tensor3<T>(prm.table.m(), prm.table.n(), prm.table.p())};
}

namespace detail {
template <class T>
std::size_t check_positional(const tensor3<T>& x, std::size_t batch, std::size_t ds, std::size_t p, const char* who) {
  TPROD_EXPECTS(batch > 0 && x.m() % batch == 0 && x.n() == ds && x.p() == p,
                std::string(who) + ": input " + x.shape() + " is not (B*T) x " + std::to_string(ds) + " x " +
                    std::to_string(p) + " with B = " + std::to_string(batch));
  return x.m() / batch;
}
/// out = x + pe on every sequence of the batch.
template <class T>
void add_per_sequence(const tensor3<T>& x, const tensor3<T>& pe, std::size_t batch, tensor3<T>& out) {
  ensure_shape_like(out, x);
  const auto len = Eigen::Index(pe.m());
  for (std::size_t k = 0; k < x.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b)
      out.slice(k).middleRows(Eigen::Index(b) * len, len) =
          x.slice(k).middleRows(Eigen::Index(b) * len, len) + pe.slice(k);
}
}  // namespace detail

/// @brief 𝒳_pos = 𝒳 + 𝒫(α) for a batch of `batch` sequences (𝒳 is (B·T)×d_s×p).
/// @throws shape_error when the rows are not a multiple of batch or p differs from the number of scales.
template <std::floating_point T>
tensor3<T> positional_forward(const sinusoidal_positional_params<T>& prm, const tensor3<T>& x, std::size_t batch) {
  const std::size_t len = detail::check_positional(x, batch, x.n(), prm.slices(), "nn::positional_forward");
  tensor3<T> out;
  detail::add_per_sequence(x, positional_encoding<T>(len, x.n(), prm.alpha_values(), prm.first_position), batch, out);
  return out;
}

/// @brief Backward: d𝒳 = d𝒴 (returned by the caller unchanged) and, when learnable,
/// dα_k = Σ_{b,t,j} d𝒴(b·T+t, j, k)·∂𝒫(t,j,k)/∂α_k with ∂sin(tωα)/∂α = tω·cos(tωα), ∂cos(tωα)/∂α = −tω·sin(tωα).
template <std::floating_point T>
sinusoidal_positional_params<T> positional_backward(const sinusoidal_positional_params<T>& prm, const tensor3<T>& d_out,
                                                    std::size_t batch) {
  const std::size_t len = detail::check_positional(d_out, batch, d_out.n(), prm.slices(), "nn::positional_backward");
  sinusoidal_positional_params<T> g{tensor3<T>(1, 1, prm.slices()), prm.learnable, prm.first_position};
  if (!prm.learnable) return g;
  const std::size_t ds = d_out.n();
  for (std::size_t k = 0; k < prm.slices(); ++k) {
    double acc = 0;
    for (std::size_t j = 0; j < ds; ++j) {
      const double w = detail::pe_frequency(j, ds);
      for (std::size_t t = 0; t < len; ++t) {
        const double pos = double(t + prm.first_position), arg = pos * w * double(prm.alpha(0, 0, k));
        const double dp = j % 2 == 0 ? pos * w * std::cos(arg) : -pos * w * std::sin(arg);
        double g_sum = 0;
        for (std::size_t b = 0; b < batch; ++b) g_sum += double(d_out(b * len + t, j, k));
        acc += g_sum * dp;
      }
    }
    g.alpha(0, 0, k) = T(acc);
  }
  return g;
}

/// @brief 𝒳 + 𝒫_learn on every sequence (the table's T must equal the sequences' length).
template <std::floating_point T>
tensor3<T> positional_forward(const learned_positional_params<T>& prm, const tensor3<T>& x, std::size_t batch) {
  const std::size_t len = detail::check_positional(x, batch, prm.table.n(), prm.table.p(), "nn::positional_forward");
  TPROD_EXPECTS(len == prm.table.m(), "nn::positional_forward: sequences of length " + std::to_string(len) +
                                          " but the learned table is " + prm.table.shape());
  tensor3<T> out;
  detail::add_per_sequence(x, prm.table, batch, out);
  return out;
}

/// @brief Backward of the learned table: d𝒫 = Σ_b d𝒴(b-th sequence).
template <std::floating_point T>
learned_positional_params<T> positional_backward(const learned_positional_params<T>& prm, const tensor3<T>& d_out,
                                                 std::size_t batch) {
  const std::size_t len =
      detail::check_positional(d_out, batch, prm.table.n(), prm.table.p(), "nn::positional_backward");
  TPROD_EXPECTS(len == prm.table.m(), "nn::positional_backward: sequences of length " + std::to_string(len) +
                                          " but the learned table is " + prm.table.shape());
  learned_positional_params<T> g{tensor3<T>(prm.table.m(), prm.table.n(), prm.table.p())};
  for (std::size_t k = 0; k < d_out.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b)
      g.table.slice(k) += d_out.slice(k).middleRows(Eigen::Index(b * len), Eigen::Index(len));
  return g;
}

}  // namespace tprod::nn
