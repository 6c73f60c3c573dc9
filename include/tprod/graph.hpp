// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file graph.hpp
/// @brief Umbrella of the graph area: adjacency matrices and Laplacians, the graph Fourier transform and spectral
///        convolution, polynomial filters, the RGTN time graph, and the attention graph of tensorized spectral
///        attention. Every operation filters its signal along mode 1 (vectors, matrices, ndtensors, tensor3).
#include "tprod/graph/adjacency.hpp"
#include "tprod/graph/attention_graph.hpp"
#include "tprod/graph/fourier.hpp"
#include "tprod/graph/laplacian.hpp"
#include "tprod/graph/mode1.hpp"
#include "tprod/graph/polynomial_filter.hpp"
#include "tprod/graph/time_graph.hpp"
