// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file fftw.hpp
/// @brief FFTW along the tubes of an (m·n)×p slice-contiguous tensor: each call is a batch of `howmany`
/// length-p transforms with element stride `stride` (the tensor's m·n, or twice that for complex data seen as
/// real) and batch distance 1, so a block of rows of the tensor is one call (the threads' units). Plans are
/// created once per (kind, p, howmany, stride, in-place, precision) with FFTW_ESTIMATE | FFTW_UNALIGNED, reused
/// with FFTW's new-array execute, and destroyed at exit (plan_cache). Only compiled when TPROD_HAS_FFTW.
#include "tprod/core/config.hpp"
#if TPROD_HAS_FFTW
#include <fftw3.h>

#include <complex>
#include <map>
#include <mutex>
#include <tuple>

#include "tprod/core/error.hpp"
#include "tprod/core/scalar.hpp"

namespace tprod::backend::cpu::fftw {

enum class kind { r2c, c2r, c2c_forward, c2c_backward, dct2, dct3 };

template <class R> struct api;
#define TPROD_DETAIL_FFTW_API(R, prefix)                                                                        \
  template <> struct api<R> {                                                                                   \
    using plan = prefix##_plan;                                                                                 \
    using cpx = prefix##_complex;                                                                               \
    static plan make(kind k, int p, int howmany, int stride, R* in, R* out) {                                              \
      const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;                                                    \
      int n[1] = {p};                                                                                           \
      switch (k) {                                                                                              \
        case kind::r2c:                                                                                         \
          return prefix##_plan_many_dft_r2c(1, n, howmany, in, nullptr, stride, 1,                             \
                                            reinterpret_cast<cpx*>(out), nullptr, stride, 1, flags);           \
        case kind::c2r:                                                                                         \
          return prefix##_plan_many_dft_c2r(1, n, howmany, reinterpret_cast<cpx*>(in), nullptr, stride, 1,    \
                                            out, nullptr, stride, 1, flags | FFTW_PRESERVE_INPUT);             \
        case kind::c2c_forward:                                                                                 \
        case kind::c2c_backward:                                                                                \
          return prefix##_plan_many_dft(1, n, howmany, reinterpret_cast<cpx*>(in), nullptr, stride, 1,         \
                                        reinterpret_cast<cpx*>(out), nullptr, stride, 1,                       \
                                        k == kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);         \
        case kind::dct2:                                                                                        \
        case kind::dct3: {                                                                                      \
          const prefix##_r2r_kind r2r[1] = {k == kind::dct2 ? FFTW_REDFT10 : FFTW_REDFT01};                    \
          return prefix##_plan_many_r2r(1, n, howmany, in, nullptr, stride, 1, out, nullptr, stride, 1, r2r,  \
                                        flags);                                                                 \
        }                                                                                                       \
      }                                                                                                         \
      return nullptr;                                                                                           \
    }                                                                                                           \
    static void destroy(plan pl) { prefix##_destroy_plan(pl); }                                                 \
    static void cleanup() { prefix##_cleanup(); }                                                               \
    static void run(kind k, plan pl, R* in, R* out) {                                                          \
      switch (k) {                                                                                              \
        case kind::r2c: prefix##_execute_dft_r2c(pl, in, reinterpret_cast<cpx*>(out)); break;                  \
        case kind::c2r: prefix##_execute_dft_c2r(pl, reinterpret_cast<cpx*>(in), out); break;                  \
        case kind::c2c_forward:                                                                                 \
        case kind::c2c_backward:                                                                                \
          prefix##_execute_dft(pl, reinterpret_cast<cpx*>(in), reinterpret_cast<cpx*>(out));                   \
          break;                                                                                                \
        case kind::dct2:                                                                                        \
        case kind::dct3: prefix##_execute_r2r(pl, in, out); break;                                             \
      }                                                                                                         \
    }                                                                                                           \
  };
TPROD_DETAIL_FFTW_API(float, fftwf)
TPROD_DETAIL_FFTW_API(double, fftw)
#undef TPROD_DETAIL_FFTW_API

/// @brief Runs a batch of `howmany` length-p transforms of kind k, element stride `stride`, from `in` to `out`
/// (out of place; `in` is not modified). Pointers are to R, complex data given as interleaved pairs (then
/// `stride` counts complex elements).
/// @brief The plans of one precision, created under a mutex (FFTW's planner is not thread-safe; executing a
/// plan is) and destroyed at exit, followed by FFTW's own cleanup, so that nothing FFTW allocated outlives the
/// program (LeakSanitizer sees no leak). Plans for in-place and out-of-place calls differ, so in-placeness is
/// part of the key.
template <class R>
class plan_cache {
 public:
  using plan = typename api<R>::plan;
  static plan_cache& instance() {
    static plan_cache cache;
    return cache;
  }
  plan get(kind k, std::size_t p, std::size_t howmany, std::size_t stride, R* in, R* out) {
    std::lock_guard lock(mutex_);
    auto& slot = plans_[{k, p, howmany, stride, in == out}];
    if (!slot) slot = api<R>::make(k, int(p), int(howmany), int(stride), in, out);
    return slot;
  }
  ~plan_cache() {
    std::lock_guard lock(mutex_);
    for (auto& entry : plans_)
      if (entry.second) api<R>::destroy(entry.second);
    plans_.clear();
    api<R>::cleanup();
  }

 private:
  plan_cache() = default;
  std::mutex mutex_;
  std::map<std::tuple<kind, std::size_t, std::size_t, std::size_t, bool>, plan> plans_;
};

template <class R>
void execute(kind k, std::size_t p, std::size_t howmany, std::size_t stride, const R* in, R* out) {
  using A = api<R>;
  const typename A::plan plan = plan_cache<R>::instance().get(k, p, howmany, stride, const_cast<R*>(in), out);
  if (!plan) throw numerical_error("FFTW could not plan a length-" + std::to_string(p) + " transform");
  A::run(k, plan, const_cast<R*>(in), out);
}

}  // namespace tprod::backend::cpu::fftw
#endif
