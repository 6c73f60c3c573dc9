// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file product.hpp
/// @brief The L-product A *_L B = L⁻¹(L(A) △ L(B)).
#include "tprod/algebra/facewise.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief C = A *_L B = L⁻¹(L(A) △ L(B)) for A ∈ 𝔽^{m×l×p}, B ∈ 𝔽^{l×n×p}: two forward transforms, p slice
/// GEMMs, one inverse transform, run as `ex` says (transform path, threads). For chains, transform once and
/// multiply `transformed` tensors instead.
/// @tparam L a transform_policy (dct, dft, matrix_transform, identity_transform).
/// @throws shape_error unless A's columns equal B's rows and both have p tubes (or L cannot act on p tubes).
/// The result is real for real A, B under dct, dft, identity and real matrix transforms; complex under a complex Z.
///
/// Under the identity the product is the facewise product, with no temporaries. Peak memory otherwise, beyond A
/// and B (which are kept): Â, B̂ and Ĉ, C taking Ĉ's place where the inverse runs in place
/// (all-dynamic extents, a transform that keeps the scalar and all p slices, GEMM or identity path; otherwise C
/// is a fourth block). A caller who can give A and B up does better with transform(std::move(A), L): then Â
/// and B̂ reuse A's and B's memory and the peak is A + B + C (what `tprod product` does).
template <any_tensor3 A, any_tensor3 B, transform_policy L>
auto product(const detail::execution_of<space_of<A>>& ex, const A& a, const B& b, const L& policy) {
  detail::static_check_same_space<space_of<A>, space_of<B>>();
  // A static_assert rather than a constraint: a mixed-precision call then fails with this sentence (and nothing
  // after it) instead of a list of candidates that do not match.
  static_assert(std::same_as<value_type_of<A>, value_type_of<B>>,
                "tprod::product: A and B have different scalar types (say double and float), and tprod does not "
                "mix precisions silently: convert one operand, e.g. tprod::tensor3<double>(b.view())");
  if constexpr (std::same_as<value_type_of<A>, value_type_of<B>> && std::same_as<space_of<A>, space_of<B>>) {
    detail::static_check_product<extents_of<A>, extents_of<B>>();
    const auto av = cview(a);
    const auto bv = cview(b);
    detail::check_product_shapes("product", av.m(), av.n(), av.p(), bv.m(), bv.n(), bv.p());
    const detail::execution_scope_of<space_of<A>> scope(ex);  // temporaries and the facewise product follow ex
    if constexpr (L::algorithm == tube_algorithm::identity)
      return facewise(ex, a, b);  // Z = I: Â = A, B̂ = B, C = Ĉ, without copying A and B
    else
      return inverse_transform(ex, transform(ex, a, policy) * transform(ex, b, policy));
  }
}

/// @brief C = A *_L B on the calling thread's default execution.
template <any_tensor3 A, any_tensor3 B, transform_policy L>
auto product(const A& a, const B& b, const L& policy) {
  return product(detail::default_execution_of<space_of<A>>(), a, b, policy);
}

}  // namespace tprod
