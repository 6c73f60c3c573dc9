// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dense_matrix.hpp
/// @brief The dynamic column-major Eigen matrix that transform matrices, slice copies and the decompositions' factor
/// matrices use (tprod::dense_matrix in decomp/ndtensor.hpp names this one), and a matrix's shape as text.
#include <array>
#include <cstddef>
#include <string>

#include <Eigen/Core>

#include "tprod/core/extents.hpp"

namespace tprod {
namespace detail {
template <class S> using dense_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
}  // namespace detail

/// @brief "rows x cols" of an Eigen matrix or expression ("3x4"), by core/extents.hpp's shape_string.
template <class Derived>
std::string shape_string(const Eigen::EigenBase<Derived>& m) {
  return shape_string(std::array<std::size_t, 2>{std::size_t(m.rows()), std::size_t(m.cols())});
}
}  // namespace tprod
