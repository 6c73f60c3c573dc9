// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform_concepts.hpp
/// @brief The transform_policy concept: an invertible p×p matrix Z acting on tubes, L(A) = A ×₃ Z.
///
/// A policy *describes* Z; it does not compute anything. How Z is applied (a GEMM with the matrices below,
/// FFTW for the DFT and DCT, threads, and later the GPU) is the backend's choice (backend/cpu/transform.hpp),
/// steered by a tprod::execution. A policy L provides, for every original-domain scalar T it accepts:
/// - `original_scalar<T>`: the scalar tensors are promoted to before transforming (complex for a complex Z);
/// - `domain_scalar<T>`: the scalar of the transform domain;
/// - `stored_slices<T>(p)`: how many transform-domain slices are stored (⌊p/2⌋+1 for the DFT of real data);
/// - `slice_weight<T>(k, p)`: how many of the p transform-domain slices stored slice k stands for (1 or 2);
/// - `forward_factor<T>(p)`: the matrix M with Â = A·M when A is seen as the (m·n)×p matrix of its tubes
///   (M = Zᵀ restricted to the stored columns), shared and cached;
/// - `inverse_factor<T>(p)`: the matrix N with A = Â·N (N = Z⁻ᵀ, with the half-spectrum weights for the DFT);
/// - `algorithm`: the fast algorithm Z is an instance of (identity, DCT-II, DFT), or none;
/// - `check_size(p)`: throws shape_error when the transform cannot act on length-p tubes;
/// - `norm_scale(p)`: c with ‖A‖²_F = c·Σ_k w_k‖Â_k‖²_F when Z is a multiple of a unitary matrix (else empty);
/// - `is_real()`: whether Z is real (then the L-transpose is the slice-wise transpose);
/// - `name()` and `==` (two policies are equal when they are the same transform).
#include <complex>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tprod/core/execution.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tube_algorithm.hpp"

namespace tprod {

template <class L, class T>
concept transform_for = scalar<T> && requires(const L& l, std::size_t p, std::size_t k) {
  { l.template stored_slices<T>(p) } -> std::same_as<std::size_t>;
  { l.template slice_weight<T>(k, p) } -> std::convertible_to<double>;
  { *l.template forward_factor<typename L::template original_scalar<T>>(p) };
  { *l.template inverse_factor<typename L::template original_scalar<T>>(p) };
};

/// @brief An L-transform usable with every scalar tprod supports.
template <class L>
concept transform_policy = std::equality_comparable<L> && transform_for<L, float> && transform_for<L, double> &&
                           transform_for<L, std::complex<float>> && transform_for<L, std::complex<double>> &&
                           requires(const L& l, std::size_t p) {
                             { L::name() } -> std::convertible_to<std::string_view>;
                             l.check_size(p);
                             { l.norm_scale(p) } -> std::same_as<std::optional<double>>;
                             { l.is_real() } -> std::same_as<bool>;
                             { L::static_size } -> std::convertible_to<std::size_t>;
                             { L::algorithm } -> std::convertible_to<tube_algorithm>;
                           };

}  // namespace tprod
