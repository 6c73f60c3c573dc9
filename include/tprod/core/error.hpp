// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file error.hpp
/// @brief The library's exception types.
#include <charconv>
#include <stdexcept>
#include <string>

#include "tprod/core/config.hpp"

namespace tprod {

/// @brief A shape precondition failed; the message names both shapes.
struct shape_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// @brief Two operands live in different transform domains (matrix_transforms with different Z): their shapes may
/// agree, the transforms do not.
struct transform_mismatch_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// @brief An argument other than a shape has a value the function does not accept (an empty or repeated name, an
/// unknown option value); the message names the parameter and the value.
struct argument_error : std::invalid_argument {
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

/// @brief A number as a message shows it: the shortest text that reads back to the same double ("1.5", "1e-05",
/// "0.1"), not std::to_string's fixed six decimals ("1.500000", "0.000010").
inline std::string number_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace tprod
