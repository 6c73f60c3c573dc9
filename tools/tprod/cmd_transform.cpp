// SPDX-License-Identifier: Apache-2.0
// tprod transform A.npy -o Ahat.npy [--transform T] [--inverse]: Ahat = L(A), or A = L^-1(Ahat).
#include "cli.hpp"

namespace tprod::cli {

namespace {

/// All p transform-domain slices of Â: the stored ones, and for a real tensor's DFT half spectrum the
/// conjugates Â_{p−k} = conj(Â_k) of the others (numpy.fft.fft's full output).
template <class Ahat>
auto full_spectrum(const Ahat& ahat) {
  using D = typename Ahat::value_type;
  tensor3<D> out(ahat.m(), ahat.n(), ahat.p(), uninitialized);
  if (out.size() == 0) return out;  // no slices to copy, however many there are
  for (std::size_t k = 0; k < ahat.p(); ++k) {
    if (k < ahat.stored_slices())
      out.slice(k) = ahat.slice(k);
    else
      out.slice(k) = ahat.slice(ahat.p() - k).conjugate();
  }
  return out;
}

/// L⁻¹ of a full transform-domain tensor given in the original layout. Under the DFT the input is taken as
/// complex and so is the output (numpy.fft.ifft); otherwise the output has the input's scalar (promoted to
/// complex under a complex Z).
template <class T, class L>
auto inverse_of(const tensor3<T>& ahat_data, const L& l) {
  using S = std::conditional_t<std::same_as<L, dft>, complex_t<T>, typename L::template original_scalar<T>>;
  transformed<S, L> ahat(ahat_data.extents(), l);
  ahat.data() = converted<typename L::template domain_scalar<S>>(ahat_data);
  return inverse_transform(ahat);
}

}  // namespace

command transform_command() {
  return {"transform",
          "A.npy -o Ahat.npy [--transform T] [--inverse]",
          "Ahat = L(A), or A = L^-1(Ahat) with --inverse",
          "Writes Ahat = L(A), Ahat[i, j, :] = Z @ A[i, j, :], with all p slices. Under dft the output is\n"
          "complex and equals numpy.fft.fft(A, axis=2) (for real A the conjugate half is filled in). Under dct,\n"
          "identity and a real Z the output has A's dtype; under a complex Z it is complex.\n"
          "With --inverse, writes L^-1(A) instead: under dft always complex, numpy.fft.ifft(A, axis=2), even for\n"
          "real input (take the real part yourself when you know the result is real); otherwise A's dtype\n"
          "(complex under a complex Z).",
          {"A.npy"},
          {output_option("where to write the result"), transform_option(), max_condition_option(),
           {"inverse", 0, "", "apply L^-1 instead of L", false}},
          [](const invocation& inv, std::ostream&) {
            check_transform_spelling(inv);
            const bool backward = inv.has("inverse");
            with_input(inv, inv.input(0), [&](const auto& a, const auto& l, const auto&) {
              if (backward)
                write_output(inv.value("output"), inverse_of(a, l));
              else
                write_output(inv.value("output"), full_spectrum(transform(a, l)));
            });
          }};
}

}  // namespace tprod::cli
