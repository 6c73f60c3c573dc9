#pragma once
/// @file activation.hpp
/// @brief Elementwise activations of the feed-forward layers: ReLU, GELU (exact, with erf) and GELU's tanh
/// approximation, with their derivatives.
///
/// ReLU(x) = max(x, 0);  GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2));
/// GELU_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
#include <unsupported/Eigen/SpecialFunctions>  // vectorized erf
#include <numbers>
#include <string_view>

#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

enum class activation { relu, gelu, gelu_tanh };

/// @brief The activation's name, for messages and benchmark labels.
constexpr std::string_view name(activation a) {
  switch (a) {
    case activation::relu: return "relu";
    case activation::gelu: return "gelu";
    case activation::gelu_tanh: return "gelu_tanh";
  }
  return "?";
}

/// @brief out = σ(in) elementwise (out may alias in).
template <std::floating_point T>
void activation_forward(activation a, const tensor3<T>& in, tensor3<T>& out) {
  detail::ensure_shape_like(out, in);
  const auto xe = in.elements();
  auto ye = out.elements();
  const auto x = xe.array();
  auto y = ye.array();
  switch (a) {
    case activation::relu: y = x.max(T(0)); break;
    case activation::gelu: y = T(0.5) * x * (T(1) + (x * T(1 / std::numbers::sqrt2)).erf()); break;
    case activation::gelu_tanh: {
      const T c = T(std::sqrt(2 / std::numbers::pi));
      y = T(0.5) * x * (T(1) + (c * (x + T(0.044715) * x.cube())).tanh());
      break;
    }
  }
}

/// @brief d_in = d_out ⊙ σ'(in) (d_in may alias d_out).
template <std::floating_point T>
void activation_backward(activation a, const tensor3<T>& in, const tensor3<T>& d_out, tensor3<T>& d_in) {
  detail::ensure_shape_like(d_in, in);
  const auto xe = in.elements();
  const auto ge = d_out.elements();
  auto dxe = d_in.elements();
  const auto x = xe.array();
  const auto g = ge.array();
  auto dx = dxe.array();
  switch (a) {
    case activation::relu: dx = (x > T(0)).select(g, T(0)); break;
    case activation::gelu: {
      // σ'(x) = Φ(x) + x·φ(x)
      const T inv_sqrt2pi = T(1 / std::sqrt(2 * std::numbers::pi));
      dx = g * (T(0.5) * (T(1) + (x * T(1 / std::numbers::sqrt2)).erf()) +
                x * inv_sqrt2pi * (T(-0.5) * x.square()).exp());
      break;
    }
    case activation::gelu_tanh: {
      const T c = T(std::sqrt(2 / std::numbers::pi)), k = T(0.044715);
      const auto t = (c * (x + k * x.cube())).tanh();
      dx = g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t.square()) * c * (T(1) + T(3) * k * x.square()));
      break;
    }
  }
}

}  // namespace tprod::nn
