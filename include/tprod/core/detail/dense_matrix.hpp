#pragma once
/// @file dense_matrix.hpp
/// @brief The dynamic column-major Eigen matrix that transform matrices, slice copies and the decompositions' factor
/// matrices use (tprod::dense_matrix in decomp/ndtensor.hpp names this one).
#include <Eigen/Core>

namespace tprod::detail {
template <class S> using dense_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
}  // namespace tprod::detail
