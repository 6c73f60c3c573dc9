#pragma once
/// @file activation.hpp
/// @brief Elementwise activations of the feed-forward layers: ReLU, GELU (exact, with erf) and GELU's tanh
/// approximation, with their derivatives.
///
/// ReLU(x) = max(x, 0);  GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2));
/// GELU_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
#include <algorithm>
#include <numbers>
#include <string_view>
#include <unsupported/Eigen/SpecialFunctions>  // vectorized erf

#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

enum class activation { relu, gelu, gelu_tanh };

/// @brief The activation's name, for messages and benchmark labels.
constexpr std::string_view name(activation a) {
  switch (a) {
    case activation::relu:
      return "relu";
    case activation::gelu:
      return "gelu";
    case activation::gelu_tanh:
      return "gelu_tanh";
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
    case activation::relu:
      y = x.max(T(0));
      break;
    case activation::gelu:
      y = T(0.5) * x * (T(1) + (x * T(1 / std::numbers::sqrt2)).erf());
      break;
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
    case activation::relu:
      dx = (x > T(0)).select(g, T(0));
      break;
    case activation::gelu: {
      // σ'(x) = Φ(x) + x·φ(x)
      const T inv_sqrt2pi = T(1 / std::sqrt(2 * std::numbers::pi));
      dx = g *
           (T(0.5) * (T(1) + (x * T(1 / std::numbers::sqrt2)).erf()) + x * inv_sqrt2pi * (T(-0.5) * x.square()).exp());
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

/// @brief g = σ(x) and, in place of x, σ'(x): what a layer that only needs σ' later (the FFN's backward pass)
/// keeps, so that the backward pass is one multiplication instead of re-evaluating erf and exp. Works in chunks
/// that stay in cache while both outputs are written.
template <std::floating_point T>
void activation_forward_keep_derivative(activation a, tensor3<T>& x_to_derivative, tensor3<T>& g) {
  detail::ensure_shape_like(g, x_to_derivative);
  constexpr Eigen::Index chunk = 1024;
  const Eigen::Index n = Eigen::Index(x_to_derivative.size());
  Eigen::Array<T, Eigen::Dynamic, 1> buf(std::min(chunk, n));
  for (Eigen::Index i = 0; i < n; i += chunk) {
    const Eigen::Index len = std::min(chunk, n - i);
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> x(x_to_derivative.data() + i, len), y(g.data() + i, len);
    auto c = buf.head(len);
    switch (a) {
      case activation::relu:
        y = x.max(T(0));
        x = (x > T(0)).select(Eigen::Array<T, Eigen::Dynamic, 1>::Ones(len), T(0));
        break;
      case activation::gelu: {
        const T inv_sqrt2pi = T(1 / std::sqrt(2 * std::numbers::pi));
        c = T(0.5) * (T(1) + (x * T(1 / std::numbers::sqrt2)).erf());  // Φ(x)
        y = x * c;
        x = c + x * inv_sqrt2pi * (T(-0.5) * x.square()).exp();  // Φ(x) + x·φ(x)
        break;
      }
      case activation::gelu_tanh: {
        const T k0 = T(std::sqrt(2 / std::numbers::pi)), k = T(0.044715);
        c = (k0 * (x + k * x.cube())).tanh();
        y = T(0.5) * x * (T(1) + c);
        x = T(0.5) * (T(1) + c) + T(0.5) * x * (T(1) - c.square()) * k0 * (T(1) + T(3) * k * x.square());
        break;
      }
    }
  }
}

}  // namespace tprod::nn
