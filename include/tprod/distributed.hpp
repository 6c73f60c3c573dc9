// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file distributed.hpp
/// @brief Umbrella of the distributed area (tprod::mpi, needs MPI): tensors spread over the ranks of an MPI
/// communicator, by tubes in the original domain and by frontal slices in the transform domain, and the algebra on
/// them: the one-process functions on each rank's slices (products, inverses, norms, the L-SVD and L-QR, ranks),
/// with the names and conventions of one process. See docs/distributed.md.
#include "tprod/distributed/algebra.hpp"
#include "tprod/distributed/communicator.hpp"
#include "tprod/distributed/npy.hpp"
#include "tprod/distributed/partition.hpp"
#include "tprod/distributed/slice_group.hpp"
#include "tprod/distributed/svd.hpp"
#include "tprod/distributed/tensor3.hpp"
#include "tprod/distributed/transformed.hpp"
