#pragma once
/// @file error.hpp
/// @brief The library's exception types.
#include <stdexcept>
#include <string>

#include "tprod/core/config.hpp"

namespace tprod {

/// @brief A shape precondition failed; the message names both shapes.
struct shape_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// @brief A numerical precondition failed: a singular transform or slice (the message carries the estimate).
struct numerical_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// @brief A file could not be read or written; the message names the file and the problem.
struct io_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tprod
