// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file sequence.hpp
/// @brief The CUDA backend's tasks on batches of sequences (contract: backend/kernels/sequence.hpp), the mirror of
/// backend/cpu/sequence.hpp, over the kernels of src/cuda/sequence.cu.
#include <span>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/sequence.hpp"

namespace tprod::backend::cuda {

using kernels::sequence_rows;

template <class T>
void copy_sequence_rows(const system& sys, dview<const T> in, sequence_rows from, dview<T> out, sequence_rows to,
                        std::size_t batch, bool accumulate) {
  raw::copy_sequence_rows(in.data(), in.m(), from.stride, from.offset, out.data(), out.m(), to.stride, to.offset,
                          from.count, batch, in.n() * in.p(), accumulate, sys.stream());
}
template <class T>
void sum_sequence_rows(const system& sys, dview<const T> in, sequence_rows from, std::size_t batch, dview<T> out) {
  raw::sum_sequence_rows(in.data(), in.m(), from.stride, from.offset, from.count, batch, in.n() * in.p(), out.data(),
                         sys.stream());
}
template <class T>
void mean_pool(const system& sys, dview<const T> x, std::span<const std::size_t> lengths, dview<T> out) {
  raw::mean_pool(x.data(), x.m() / out.m(), out.m(), x.n() * x.p(), lengths.empty() ? nullptr : lengths.data(),
                 out.data(), sys.stream());
}
template <class T>
void mean_pool_backward(const system& sys, dview<const T> d_out, std::span<const std::size_t> lengths, dview<T> d_in) {
  raw::mean_pool_backward(d_out.data(), d_in.m() / d_out.m(), d_out.m(), d_out.n() * d_out.p(),
                          lengths.empty() ? nullptr : lengths.data(), d_in.data(), sys.stream());
}
template <class T>
void dropout_forward(const system& sys, std::uint64_t seed, std::uint64_t pass, double rate, dview<const T> x,
                     dview<T> mask, dview<T> out) {
  raw::dropout_forward(seed, pass, rate, x.data(), mask.data(), out.data(), x.size(), sys.stream());
}

}  // namespace tprod::backend::cuda
