// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file activation.hpp
/// @brief The CPU backend's activation tasks (contract: backend/kernels/activation.hpp): Eigen's vectorized
/// array expressions (erf from Eigen's SpecialFunctions), with the derivatives
///   ReLU'(x) = [x > 0],   GELU'(x) = Φ(x) + x·φ(x),
///   GELU_tanh'(x) = ½(1 + t) + ½x(1 − t²)·c(1 + 3k·x²),  t = tanh(c(x + k·x³)), c = √(2/π), k = 0.044715,
///   tanh'(x) = 1 − tanh²(x).
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <unsupported/Eigen/SpecialFunctions>  // vectorized erf

#include "tprod/backend/cpu/elementwise.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

using kernels::activation;

/// @brief y = σ(x) elementwise (y may be x's memory).
template <class T>
void activation_forward(const system&, activation a, tensor3_view<const T> in, tensor3_view<T> out) {
  const auto x = detail::array(in);
  auto y = detail::array(out);
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
    case activation::tanh:
      y = x.tanh();
      break;
  }
}

/// @brief dx = g ⊙ σ'(x) (dx may be g's memory).
template <class T>
void activation_backward(const system&, activation a, tensor3_view<const T> in, tensor3_view<const T> d_out,
                         tensor3_view<T> d_in) {
  const auto x = detail::array(in), g = detail::array(d_out);
  auto dx = detail::array(d_in);
  switch (a) {
    case activation::relu:
      dx = (x > T(0)).select(g, T(0));
      break;
    case activation::gelu: {
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
    case activation::tanh:
      dx = g * (T(1) - x.tanh().square());
      break;
  }
}

/// @brief y = σ(x) and, in place of x, σ'(x), in chunks that stay in cache while both outputs are written (so the
/// backward pass is one multiplication instead of re-evaluating erf and exp).
template <class T>
void activation_keep_derivative(const system&, activation a, tensor3_view<T> x_to_derivative, tensor3_view<T> out) {
  constexpr Eigen::Index chunk = 1024;
  const Eigen::Index n = Eigen::Index(x_to_derivative.size());
  Eigen::Array<T, Eigen::Dynamic, 1> buf(std::min(chunk, n));
  for (Eigen::Index i = 0; i < n; i += chunk) {
    const Eigen::Index len = std::min(chunk, n - i);
    auto x = detail::array(tensor3_view<T>(x_to_derivative.data() + i, std::size_t(len), 1, 1));
    auto y = detail::array(tensor3_view<T>(out.data() + i, std::size_t(len), 1, 1));
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
      case activation::tanh:
        y = x.tanh();
        x = T(1) - y.square();
        break;
    }
  }
}

/// @brief y ← y ⊙ f.
template <class T>
void multiply_elementwise(const system&, tensor3_view<const T> f, tensor3_view<T> y) {
  detail::array(y) *= detail::array(f);
}

}  // namespace tprod::backend::cpu
