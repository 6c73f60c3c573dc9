#pragma once
/// @file transform_concepts.hpp
/// @brief The transform_policy concept: an invertible p×p matrix Z acting on tubes, L(A) = A ×₃ Z.
///
/// A policy L provides, for every original-domain scalar T it accepts:
/// - `original_scalar<T>`: the scalar tensors are promoted to before transforming (complex for a complex Z);
/// - `domain_scalar<T>`: the scalar of the transform domain;
/// - `stored_slices<T>(p)`: how many transform-domain slices are stored (⌊p/2⌋+1 for the DFT of real data);
/// - `slice_weight<T>(k, p)`: how many of the p transform-domain slices stored slice k stands for (1 or 2);
/// - `forward(a, ahat)` / `inverse(ahat, a)`: the transform and its inverse along every tube;
/// - `check_size(p)`: throws shape_error when the transform cannot act on length-p tubes;
/// - `norm_scale(p)`: c with ‖A‖²_F = c·Σ_k w_k‖Â_k‖²_F when Z is a multiple of a unitary matrix (else empty);
/// - `is_real()`: whether Z is real (then the L-transpose is the slice-wise transpose);
/// - `name()` and `==` (two policies are equal when they are the same transform).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tprod/core/tensor3_view.hpp"
#include "tprod/transform/transform_path.hpp"

namespace tprod {

template <class L, class T>
concept transform_for =
    scalar<T> && requires(const L& l, std::size_t p, std::size_t k,
                          tensor3_view<const typename L::template original_scalar<T>> a,
                          tensor3_view<typename L::template original_scalar<T>> a_out,
                          tensor3_view<typename L::template domain_scalar<T>> ahat,
                          tensor3_view<const typename L::template domain_scalar<T>> ahat_in) {
      { l.template stored_slices<T>(p) } -> std::same_as<std::size_t>;
      { l.template slice_weight<T>(k, p) } -> std::convertible_to<double>;
      l.forward(a, ahat);
      l.inverse(ahat_in, a_out);
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
                           };

}  // namespace tprod
