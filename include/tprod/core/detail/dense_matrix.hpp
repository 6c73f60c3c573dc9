#pragma once
/// @file dense_matrix.hpp
/// @brief The dynamic column-major Eigen matrix that transform matrices and slice copies use.
#include <Eigen/Core>

namespace tprod::detail {
template <class S> using dense_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
}  // namespace tprod::detail
