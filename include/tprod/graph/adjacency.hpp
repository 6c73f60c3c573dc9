// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file adjacency.hpp
/// @brief Weighted adjacency matrices from edge lists: A ∈ ℝ^{L×L} with a_{l₁,l₂} = w_e for every edge
///        e = (l₁, l₂) and 0 elsewhere.
#include <string>
#include <vector>

#include "tprod/decomp/ndtensor.hpp"

namespace tprod {

/// @brief One edge (from, to) of a graph on vertices 0 … L−1.
struct graph_edge {
  std::size_t from = 0;
  std::size_t to = 0;
};

/// @brief Whether an edge (l₁, l₂) also sets a_{l₂,l₁} (an undirected graph, A = Aᵀ).
enum class edge_direction { undirected, directed };

/// @brief A ∈ ℝ^{L×L}: a_{from,to} = weights[e] (1 when `weights` is empty) for every edge e, and for undirected
///        graphs also a_{to,from}. Repeated edges add their weights.
/// @throws shape_error when an edge names a vertex ≥ L, or `weights` is neither empty nor one per edge.
template <real_scalar T>
dense_matrix<T> adjacency_from_edges(std::size_t vertices, const std::vector<graph_edge>& edges,
                                     const std::vector<T>& weights = {},
                                     edge_direction direction = edge_direction::undirected) {
  TPROD_EXPECTS(weights.empty() || weights.size() == edges.size(),
                "adjacency_from_edges: " + std::to_string(weights.size()) + " weights for " +
                    std::to_string(edges.size()) + " edges");
  dense_matrix<T> a = dense_matrix<T>::Zero(Eigen::Index(vertices), Eigen::Index(vertices));
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [from, to] = edges[e];
    TPROD_EXPECTS(from < vertices && to < vertices,
                  "adjacency_from_edges: edge " + std::to_string(e) + " (" + std::to_string(from) + ", " +
                      std::to_string(to) + ") names a vertex outside 0.." + std::to_string(vertices) + "-1");
    const T w = weights.empty() ? T(1) : weights[e];
    a(Eigen::Index(from), Eigen::Index(to)) += w;
    if (direction == edge_direction::undirected && from != to) a(Eigen::Index(to), Eigen::Index(from)) += w;
  }
  return a;
}

namespace detail {
template <class Derived>
void expect_square(const Eigen::MatrixBase<Derived>& a, const char* where, const char* what = "adjacency matrix") {
  TPROD_EXPECTS(a.rows() == a.cols(), std::string(where) + ": the " + what + " must be square, got " +
                                          shape_string(a));
}
}  // namespace detail

}  // namespace tprod
