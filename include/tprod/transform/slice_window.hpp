// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_window.hpp
/// @brief slice_window: which of a transform-domain tensor's stored slices one object holds, and the group of
/// holders that must agree on the few results that depend on every slice.
///
/// On one process a transformed holds every stored slice and its window has no group: each collective step below
/// returns its argument. A tensor spread over MPI ranks by slices (tprod::distributed::transformed) gives each rank
/// a transformed whose window is its block of the global slices, with a group that reduces over the ranks. The
/// algebra is then written once: the facewise operations never look at the window; the steps that need every slice
/// (norms and inner products, the singular values that decide ranks and truncations, the largest slice norm of the
/// inverse's singularity test, errors found on one holder) go through it.
#include <complex>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tprod/core/error.hpp"

namespace tprod {

/// @brief The collective steps of the holders of one tensor's slices (implemented over MPI by the distributed
/// layer). Every holder must call each step, in the same order.
class slice_group {
 public:
  virtual ~slice_group() = default;
  /// @brief Σ over the holders of each holder's value, on every holder.
  virtual double sum(double local) const = 0;
  virtual std::complex<double> sum(std::complex<double> local) const = 0;
  /// @brief The largest of the holders' values, on every holder.
  virtual double max(double local) const = 0;
  /// @brief The rows × (all stored slices) column-major matrix whose columns each holder has for its own slices
  /// (`local`: rows × its slice count), on every holder.
  virtual std::vector<double> gather_columns(const std::vector<double>& local, std::size_t rows) const = 0;
  /// @brief Runs `local` (this holder's work, no collective step inside); when it threw on any holder, every holder
  /// throws one error saying which holder failed and why.
  virtual void agree(const std::function<void()>& local) const = 0;
  /// @brief The same holders (tensors on the same group can be combined).
  virtual bool same(const slice_group& other) const = 0;
};

/// @brief The stored slices first … first + count − 1 of a tensor with `total` stored slices, and their holders.
struct slice_window {
  std::size_t first = 0, count = 0, total = 0;
  std::shared_ptr<const slice_group> group;  ///< null: one process holds every slice

  /// @brief The window of a tensor held whole by one process.
  static slice_window whole(std::size_t total) { return {0, total, total, nullptr}; }
  bool holds_every_slice() const { return first == 0 && count == total; }

  bool operator==(const slice_window& o) const {
    return first == o.first && count == o.count && total == o.total && bool(group) == bool(o.group) &&
           (!group || group->same(*o.group));
  }

  /// @brief The collective steps of slice_group, or the value itself when one process holds every slice.
  template <class D>
  D sum(D local) const {
    if (!group) return local;
    if constexpr (requires { local.imag(); })
      return D(group->sum(std::complex<double>(local)));
    else
      return D(group->sum(double(local)));
  }
  double max(double local) const { return group ? group->max(local) : local; }
  /// @brief Whether `local` holds on every holder.
  bool all(bool local) const { return group ? group->sum(local ? 0.0 : 1.0) == 0.0 : local; }
  template <class R>
  std::vector<R> gather_columns(const std::vector<R>& local, std::size_t rows) const {
    if (!group) return local;
    const std::vector<double> all = group->gather_columns(std::vector<double>(local.begin(), local.end()), rows);
    return std::vector<R>(all.begin(), all.end());  // exact: R's values went up to double and come back
  }
  template <class F>
  void agree(F&& local) const {
    if (group) group->agree(std::function<void()>(std::forward<F>(local)));
    else local();
  }
  /// @brief `local` under agree, a numerical_error's message saying where this holder's slices start (the
  /// backends count the slices they are given from 0).
  template <class F>
  void agree_on_slices(F&& local) const {
    agree([&] {
      try {
        local();
      } catch (const numerical_error& e) {
        if (first == 0) throw;
        throw numerical_error(std::string(e.what()) + " (counted from global slice " + std::to_string(first) +
                              ", the first this rank owns)");
      }
    });
  }
};

}  // namespace tprod
