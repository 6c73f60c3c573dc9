// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file schedule.hpp
/// @brief Learning-rate schedules of paper 000 (Table 5): one-cycle (10% linear warm-up, then cosine
/// annealing to 10⁻⁵) and a cosine schedule with optional linear warm-up.
///
/// one_cycle, over steps 0…S−1 with W = round(pct_start·S) warm-up steps:
///   s < W:  η(s) = η₀ + (η_max − η₀)·s/W             (η₀ = η_max/div_factor, PyTorch's default 25)
///   s ≥ W:  η(s) = η_min + (η_max − η_min)·(1 + cos(π·(s − W)/(S − 1 − W)))/2   (η(S−1) = η_min)
/// cosine_schedule is the same shape with η₀ = 0 (or no warm-up) and η_min = min_lr.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>

#include "tprod/core/error.hpp"

namespace tprod::nn {

namespace detail {
inline double warmup_cosine(std::size_t step, std::size_t total, std::size_t warm, double start, double peak,
                            double end) {
  if (step < warm) return start + (peak - start) * double(step) / double(warm);
  if (warm + 1 >= total) return peak;  // no annealing phase left
  const double frac = std::min(1.0, double(step - warm) / double(total - 1 - warm));
  return end + (peak - end) * 0.5 * (1 + std::cos(std::numbers::pi * frac));
}
}  // namespace detail

/// @brief PyTorch-style OneCycleLR with linear warm-up and cosine annealing (paper 000, Table 5).
struct one_cycle {
  double max_lr = 3e-4;
  std::size_t total_steps = 1;
  double pct_start = 0.1;
  double div_factor = 25;
  double final_lr = 1e-5;

  /// @throws shape_error for total_steps = 0, pct_start outside [0, 1) or non-positive rates.
  double operator()(std::size_t step) const {
    TPROD_EXPECTS(total_steps > 0 && pct_start >= 0 && pct_start < 1 && max_lr > 0 && div_factor > 0,
                  "nn::one_cycle: total_steps " + std::to_string(total_steps) + ", pct_start " +
                      std::to_string(pct_start) + ", max_lr " + std::to_string(max_lr));
    const auto warm = std::size_t(std::lround(pct_start * double(total_steps)));
    return detail::warmup_cosine(step, total_steps, warm, max_lr / div_factor, max_lr, final_lr);
  }
};

/// @brief Cosine decay from max_lr to min_lr over total_steps, after warmup_steps of linear warm-up from 0.
struct cosine_schedule {
  double max_lr = 3e-4;
  std::size_t total_steps = 1;
  std::size_t warmup_steps = 0;
  double min_lr = 0;

  /// @throws shape_error when total_steps = 0 or warmup_steps ≥ total_steps.
  double operator()(std::size_t step) const {
    TPROD_EXPECTS(total_steps > 0 && warmup_steps < total_steps, "nn::cosine_schedule: total_steps " +
                                                                     std::to_string(total_steps) + ", warmup_steps " +
                                                                     std::to_string(warmup_steps));
    return detail::warmup_cosine(step, total_steps, warmup_steps, 0.0, max_lr, min_lr);
  }
};

}  // namespace tprod::nn
