// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the decomposition benchmarks: the decompositions are compiled once, in tprod::instances.
#include <benchmark/benchmark.h>

#include "tprod/decomp/extern_templates.hpp"

namespace bench_decomp {

// BERT-base attention and feed-forward sizes.
inline constexpr std::size_t d_model = 768, heads = 12, d_v = d_model / heads, d_ff = 3072;

inline tprod::attention_weights<double> bert_attention(std::uint64_t seed) {
  return {tprod::random_matrix<double>(d_model, d_model, seed), tprod::random_matrix<double>(d_model, d_model, seed + 1),
          tprod::random_matrix<double>(d_model, d_model, seed + 2), tprod::random_matrix<double>(d_model, d_model, seed + 3)};
}

}  // namespace bench_decomp
