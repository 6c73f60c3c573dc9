// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file system.hpp
/// @brief The CPU backend's system: the first argument of every CPU kernel task, carrying the call's execution
/// (transform path and threads). Selected for host_space tensors (core/memory_space.hpp).
#include "tprod/core/execution.hpp"
#include "tprod/core/memory_space.hpp"

namespace tprod::backend::cpu {

/// @brief How CPU kernel tasks run: the path of the tube transforms and the thread count (tprod::execution).
struct system {
  tprod::execution ex{};
  std::size_t threads() const { return ex.thread_count(); }
};

}  // namespace tprod::backend::cpu

namespace tprod::backend {
template <>
struct system_for<host_space> {
  using type = cpu::system;
  using execution = tprod::execution;
  using execution_scope = tprod::execution_scope;  ///< makes an execution the thread's default for a scope
  static type make(const execution& ex) { return type{ex}; }
  static const execution& default_execution() { return tprod::default_execution(); }
};
}  // namespace tprod::backend
