// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file factor_mode.hpp
/// @brief factor_mode: full or economy-size factors of the L-SVD and the L-QR.

namespace tprod {

/// @brief For A ∈ 𝔽^{m×n×p} and r = min(m, n):
/// - `economy`: U m×r×p, S r×r×p, V n×r×p (L-SVD); Q m×r×p, R r×n×p (L-QR);
/// - `full`:    U m×m×p, S m×n×p, V n×n×p (L-SVD); Q m×m×p, R m×n×p (L-QR).
enum class factor_mode { economy, full };

}  // namespace tprod
