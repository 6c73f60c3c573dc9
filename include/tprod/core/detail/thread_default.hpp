// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file thread_default.hpp
/// @brief A per-thread default value and the scope that replaces it: what each backend's execution uses for its
/// `default_execution()` and `execution_scope` (the CPU's tprod::execution, the device's tprod::cuda::execution).
namespace tprod::detail {

/// @brief The calling thread's current default V (value-initialized until a scope sets it).
template <class V>
V& thread_default() {
  thread_local V value{};
  return value;
}

/// @brief Makes `v` the calling thread's default V until the scope ends (scopes nest).
template <class V>
class thread_default_scope {
 public:
  explicit thread_default_scope(const V& v) : saved_(thread_default<V>()) { thread_default<V>() = v; }
  ~thread_default_scope() { thread_default<V>() = saved_; }
  thread_default_scope(const thread_default_scope&) = delete;
  thread_default_scope& operator=(const thread_default_scope&) = delete;

 private:
  V saved_;
};

}  // namespace tprod::detail
