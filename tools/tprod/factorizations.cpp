// SPDX-License-Identifier: Apache-2.0
// The definitions behind factorizations.hpp, for the two working scalars. The L-SVDs and ranks themselves (and
// Eigen's BDCSVD under them) come compiled from tprod::instances for the common transforms.
#include "factorizations.hpp"
#include "tprod/algebra/extern_templates.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/algebra/svd_truncation.hpp"

namespace tprod::cli {

/// Calls f(L) with the chosen transform policy, for the policies that keep W (all but a complex Z for real W,
/// which the caller has promoted to complex beforehand: see working_scalar_for).
template <working_scalar W, class F>
void with_transform_keeping(const transform_choice& t, F&& f) {
  with_transform(t, [&](const auto& l) {
    if constexpr (std::same_as<typename std::decay_t<decltype(l)>::template original_scalar<W>, W>)
      f(l);
    else
      throw std::logic_error("tprod: real data under a complex Z must be promoted to complex first");
  });
}

template <working_scalar W>
svd_factors<W> lsvd(const tensor3<W>& a, const transform_choice& t, svd_request request) {
  svd_factors<W> f;
  with_transform_keeping<W>(t, [&](const auto& l) {
    auto r = request.rank     ? truncated_svd(a, l, request.rank)
             : request.energy ? energy_truncated_svd(a, l, request.energy)
                              : svd(a, l);
    const double norm = a.elements().norm();
    const double error = (a.elements() - reconstruct(r).elements()).norm();
    f = {std::move(r.u), std::move(r.s), std::move(r.v), r.kept, norm > 0 ? error / norm : 0.0, compression_ratio(r)};
  });
  return f;
}

template <working_scalar W>
rank_info lranks(const tensor3<W>& a, const transform_choice& t, double tol, double epsilon) {
  rank_info info;
  with_transform_keeping<W>(t, [&](const auto& l) { info = ranks(a, l, tol, epsilon); });
  return info;
}

template svd_factors<double> lsvd(const tensor3<double>&, const transform_choice&, svd_request);
template svd_factors<std::complex<double>> lsvd(const tensor3<std::complex<double>>&, const transform_choice&,
                                                svd_request);
template rank_info lranks(const tensor3<double>&, const transform_choice&, double, double);
template rank_info lranks(const tensor3<std::complex<double>>&, const transform_choice&, double, double);

}  // namespace tprod::cli
