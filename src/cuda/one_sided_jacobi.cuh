// SPDX-License-Identifier: Apache-2.0
// The one-sided (Hestenes) Jacobi SVD of one slice, written once for a "team" of workers: the CUDA backend runs it
// with one thread block per slice (src/cuda/slice_svd.cu: a worker is a warp, its lanes share the dot products),
// and the host test (tests/backend/test_one_sided_jacobi.cpp) runs the same code with one worker of one lane, against
// Eigen's SVD. Plain C++ without a CUDA header; under nvcc every function is __device__.
//
// For an m×n slice A, let X be A (m ≥ n) or Aᴴ (m < n): rows ≥ cols, and Q = I (cols×cols). A sweep applies to the
// column pairs (p, q) of X, and to the same columns of Q, the unitary rotation that makes x_p and x_q orthogonal:
//   α = ‖x_p‖², β = ‖x_q‖², γ = x_pᴴx_q,  ζ = (β − α)/(2|γ|),  t = sign(ζ)/(|ζ| + √(1 + ζ²)),
//   c = 1/√(1 + t²),  s = c·t·γ/|γ|,  x_p ← c·x_p − s̄·x_q,  x_q ← s·x_p + c·x_q
// (Golub and Van Loan's 2×2 symmetric Schur step, §8.5, with the phase of γ carried by s: then x_pᴴx_q = 0).
// The pairs of a sweep come in cols − 1 rounds (cols + 1 for odd cols) of disjoint pairs, the circle method, so
// the workers of a round never touch the same column. A pair counts as orthogonal when |γ| ≤ rows·ε·√(αβ), the
// rounding of a rows-term dot product; sweeps stop when a whole sweep finds every pair orthogonal. Then
// XQ = W·Σ with σ_j = ‖x_j‖ and W = X·Σ⁻¹, so A = W Σ Qᴴ (A = X) or A = Q Σ Wᴴ (Aᴴ = X): the normalized columns are
// U or V, Q is the other; both are written in the order of non-increasing σ. Columns with σ_j = 0 (or too small to
// normalize) are completed to an orthonormal set by classical Gram–Schmidt, twice, on unit vectors. The slice is
// scaled by a power of two so that its largest part (real or imaginary) lies in [0.5, 1) first, so that no square over- or underflows.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#ifdef __CUDACC__
#define TPROD_JACOBI_FN __device__ inline
#else
#define TPROD_JACOBI_FN inline
#endif

namespace tprod::backend::cuda::jacobi {

template <class D>
concept complex_scalar = requires(D x) { x.imag(); };

template <class D> struct real_of_scalar { using type = D; };
template <complex_scalar D> struct real_of_scalar<D> { using type = typename D::value_type; };
template <class D> using real_of = typename real_of_scalar<D>::type;

template <class D> TPROD_JACOBI_FN real_of<D> re(D x) {
  if constexpr (complex_scalar<D>) return x.real(); else return x;
}
template <class D> TPROD_JACOBI_FN real_of<D> im(D x) {
  if constexpr (complex_scalar<D>) return x.imag(); else return real_of<D>(0);
}
template <class D> TPROD_JACOBI_FN D make(real_of<D> r, real_of<D> i) {
  if constexpr (complex_scalar<D>) return D(r, i); else return D(r);
}
template <class D> TPROD_JACOBI_FN D conjugate(D x) { return make<D>(re(x), -im(x)); }
template <class D> TPROD_JACOBI_FN real_of<D> abs2(D x) { return re(x) * re(x) + im(x) * im(x); }

// The few <cmath> functions the algorithm needs, as the device's overloads under nvcc and std:: on the host.
#ifdef __CUDACC__
template <class R> TPROD_JACOBI_FN R root(R x) { return sqrt(x); }
template <class R> TPROD_JACOBI_FN R magnitude(R x) { return fabs(x); }
template <class R> TPROD_JACOBI_FN R hypotenuse(R x, R y) { return hypot(x, y); }
template <class R> TPROD_JACOBI_FN R sign_of(R x) { return copysign(R(1), x); }
template <class R> TPROD_JACOBI_FN int exponent_of(R x) { int e = 0; frexp(x, &e); return e; }
template <class R> TPROD_JACOBI_FN R power_of_two(int e) { return ldexp(R(1), e); }
#else
template <class R> TPROD_JACOBI_FN R root(R x) { return std::sqrt(x); }
template <class R> TPROD_JACOBI_FN R magnitude(R x) { return std::fabs(x); }
template <class R> TPROD_JACOBI_FN R hypotenuse(R x, R y) { return std::hypot(x, y); }
template <class R> TPROD_JACOBI_FN R sign_of(R x) { return std::copysign(R(1), x); }
template <class R> TPROD_JACOBI_FN int exponent_of(R x) { int e = 0; (void)std::frexp(x, &e); return e; }
template <class R> TPROD_JACOBI_FN R power_of_two(int e) { return std::ldexp(R(1), e); }
#endif

// ε and the smallest normal number as constants (nvcc reads constexpr variables in device code, not
// numeric_limits' functions).
template <class R> constexpr R epsilon_of = std::numeric_limits<R>::epsilon();
template <class R> constexpr R smallest_normal_of = std::numeric_limits<R>::min();

/// Sweeps after which a slice counts as not converged (cuSOLVER's gesvdj default).
constexpr int max_sweeps = 100;
/// The most columns and rows this code takes (the team's shared arrays hold one value per row or column).
constexpr int max_extent = 256;

/// Pair k (0 ≤ k < padded/2) of round `round` (0 ≤ round < padded − 1) over `padded` (even) columns, p < q: column
/// padded − 1 stays, the others turn one place per round, so each pair of columns meets exactly once a sweep.
TPROD_JACOBI_FN void pair_of(int round, int k, int padded, int& p, int& q) {
  const int turning = padded - 1;
  int a = round, b = turning;
  if (k != 0) {
    a = (round + k) % turning;
    b = (round - k + turning) % turning;
  }
  p = a < b ? a : b;
  q = a < b ? b : a;
}

/// c and s of the rotation that makes two columns orthogonal, from α, β and γ = x_pᴴx_q ≠ 0 (the header's formula).
template <class R> struct rotation {
  R c, s_re, s_im;
};
template <class R> TPROD_JACOBI_FN rotation<R> rotation_of(R alpha, R beta, R g_re, R g_im) {
  const R g = hypotenuse(g_re, g_im);
  const R zeta = (beta - alpha) / (2 * g);
  const R t = sign_of(zeta) / (magnitude(zeta) + hypotenuse(R(1), zeta));
  const R c = 1 / root(1 + t * t);
  const R s = c * t;
  return {c, s * (g_re / g), s * (g_im / g)};
}

/// Where the team's memory is: x rows×cols and q cols×cols (shared memory or the slice's part of a global
/// workspace), and per-slice scratch in the team's shared memory.
template <class D> struct slice_work {
  D* x;
  D* q;
  real_of<D>* sigma;  // cols
  int* position;      // cols
  D* w;               // rows: the vector being completed
  D* coefficient;     // cols: its projections
  real_of<D>* slot;   // one value the whole team reads
};

/// X = 2^-e·A or 2^-e·Aᴴ with the largest real or imaginary part of 2^-e·a_ij in [0.5, 1), and Q = I; returns
/// 2^e (0 for a zero slice, whose X is zero).
template <class D, class Team>
TPROD_JACOBI_FN real_of<D> load(const D* a, int m, int n, const slice_work<D>& w, Team& team) {
  using R = real_of<D>;
  const bool tall = m >= n;
  const int rows = tall ? m : n, cols = tall ? n : m;
  R largest = 0;  // the largest part, real or imaginary (a modulus could overflow)
  for (int i = team.thread; i < m * n; i += team.threads) {
    const R v = magnitude(re(a[i])) > magnitude(im(a[i])) ? magnitude(re(a[i])) : magnitude(im(a[i]));
    largest = v > largest ? v : largest;
  }
  largest = team.max_all(largest);
  const int e = largest == 0 ? 0 : exponent_of(largest);
  const R scale = power_of_two<R>(-e);
  for (int idx = team.thread; idx < rows * cols; idx += team.threads) {
    const int i = idx % rows, j = idx / rows;
    w.x[idx] = (tall ? a[i + j * m] : conjugate(a[j + i * m])) * scale;
  }
  for (int idx = team.thread; idx < cols * cols; idx += team.threads)
    w.q[idx] = make<D>(idx % cols == idx / cols ? R(1) : R(0), R(0));
  team.sync();
  return largest == 0 ? R(0) : power_of_two<R>(e);
}

/// Sweeps until one finds every pair orthogonal; returns the sweeps taken, or max_sweeps + 1 when none did.
template <class D, class Team>
TPROD_JACOBI_FN int sweep(int rows, int cols, const slice_work<D>& w, Team& team) {
  using R = real_of<D>;
  const R tol = R(rows) * epsilon_of<R>;
  const int padded = cols + (cols & 1);
  for (int s = 1; s <= max_sweeps; ++s) {
    bool rotated = false;
    for (int round = 0; round + 1 < padded; ++round) {
      for (int k = team.worker; k < padded / 2; k += team.workers) {
        int p = 0, q = 0;
        pair_of(round, k, padded, p, q);
        if (q >= cols) continue;  // the padding column of an odd count
        D* xp = w.x + p * rows;
        D* xq = w.x + q * rows;
        R alpha = 0, beta = 0, g_re = 0, g_im = 0;
        for (int i = team.lane; i < rows; i += team.lanes) {
          const D dot = conjugate(xp[i]) * xq[i];
          alpha += abs2(xp[i]);
          beta += abs2(xq[i]);
          g_re += re(dot);
          g_im += im(dot);
        }
        alpha = team.lane_sum(alpha);
        beta = team.lane_sum(beta);
        g_re = team.lane_sum(g_re);
        g_im = team.lane_sum(g_im);
        if (!(hypotenuse(g_re, g_im) > tol * root(alpha) * root(beta))) continue;
        rotated = true;
        const rotation<R> r = rotation_of(alpha, beta, g_re, g_im);
        const D s = make<D>(r.s_re, r.s_im), s_bar = conjugate(s);
        for (int i = team.lane; i < rows; i += team.lanes) {
          const D a = xp[i], b = xq[i];
          xp[i] = a * r.c - s_bar * b;
          xq[i] = s * a + b * r.c;
        }
        D* qp = w.q + p * cols;
        D* qq = w.q + q * cols;
        for (int i = team.lane; i < cols; i += team.lanes) {
          const D a = qp[i], b = qq[i];
          qp[i] = a * r.c - s_bar * b;
          qq[i] = s * a + b * r.c;
        }
      }
      if (round + 2 < padded) team.sync();
    }
    if (!team.any(rotated)) return s;
  }
  return max_sweeps + 1;
}

/// Writes σ (cols, non-increasing, times `scale`), the normalized columns into `normalized` (rows×cols) and Q into
/// `other` (cols×cols), both in the order of σ, and completes the columns of zero σ.
template <class D, class Team>
TPROD_JACOBI_FN void finish(int rows, int cols, real_of<D> scale, const slice_work<D>& w, D* normalized, D* other,
                            real_of<D>* sigma, Team& team) {
  using R = real_of<D>;
  for (int j = team.worker; j < cols; j += team.workers) {
    R sum = 0;
    for (int i = team.lane; i < rows; i += team.lanes) sum += abs2(w.x[i + j * rows]);
    sum = team.lane_sum(sum);
    if (team.lane == 0) w.sigma[j] = scale == 0 ? R(0) : root(sum);
  }
  team.sync();
  // Too small to divide by without losing the column's direction: completed below instead.
  const R smallest = smallest_normal_of<R> / epsilon_of<R>;
  for (int j = team.thread; j < cols; j += team.threads) {
    int before = 0;
    for (int i = 0; i < cols; ++i)
      before += w.sigma[i] > w.sigma[j] || (w.sigma[i] == w.sigma[j] && i < j) ? 1 : 0;
    w.position[j] = before;
    sigma[before] = w.sigma[j] * scale;
  }
  team.sync();
  int nonzero = 0;
  for (int j = 0; j < cols; ++j) nonzero += w.sigma[j] > smallest ? 1 : 0;
  for (int idx = team.thread; idx < rows * cols; idx += team.threads) {
    const int i = idx % rows, j = idx / rows;
    if (w.sigma[j] > smallest) normalized[i + w.position[j] * rows] = w.x[idx] * (R(1) / w.sigma[j]);
  }
  for (int idx = team.thread; idx < cols * cols; idx += team.threads) {
    const int i = idx % cols, j = idx / cols;
    other[i + w.position[j] * cols] = w.q[idx];
  }
  team.sync();
  // Columns nonzero … cols − 1 (the zero σ sort last): e_c made orthogonal to the columns before, for the first c
  // whose remainder keeps at least half its length (one exists, since fewer than rows columns come before).
  for (int j = nonzero; j < cols; ++j) {
    for (int c = 0; c < rows; ++c) {
      for (int i = team.thread; i < rows; i += team.threads) w.w[i] = make<D>(i == c ? R(1) : R(0), R(0));
      team.sync();
      for (int pass = 0; pass < 2; ++pass) {
        for (int k = team.worker; k < j; k += team.workers) {
          R d_re = 0, d_im = 0;
          for (int i = team.lane; i < rows; i += team.lanes) {
            const D d = conjugate(normalized[i + k * rows]) * w.w[i];
            d_re += re(d);
            d_im += im(d);
          }
          d_re = team.lane_sum(d_re);
          d_im = team.lane_sum(d_im);
          if (team.lane == 0) w.coefficient[k] = make<D>(d_re, d_im);
        }
        team.sync();
        for (int i = team.thread; i < rows; i += team.threads) {
          D v = w.w[i];
          for (int k = 0; k < j; ++k) v = v - w.coefficient[k] * normalized[i + k * rows];
          w.w[i] = v;
        }
        team.sync();
      }
      if (team.worker == 0) {
        R sum = 0;
        for (int i = team.lane; i < rows; i += team.lanes) sum += abs2(w.w[i]);
        sum = team.lane_sum(sum);
        if (team.lane == 0) *w.slot = sum;
      }
      team.sync();
      const R length2 = *w.slot;
      if (length2 > R(0.25)) {
        const R inv = R(1) / root(length2);
        for (int i = team.thread; i < rows; i += team.threads) normalized[i + j * rows] = w.w[i] * inv;
        team.sync();
        break;
      }
      team.sync();  // every thread has read the slot before the next candidate writes it
    }
  }
}

/// The SVD of the m×n slice a (column-major): u m×r, v n×r, σ r = min(m, n), economy form; returns 0, or
/// max_sweeps + 1 when the sweeps did not converge (cuSOLVER's info convention: nonzero is a failure).
template <class D, class Team>
TPROD_JACOBI_FN int svd_slice(const D* a, int m, int n, D* u, D* v, real_of<D>* sigma, const slice_work<D>& w,
                              Team& team) {
  const bool tall = m >= n;
  const int rows = tall ? m : n, cols = tall ? n : m;
  const real_of<D> scale = load(a, m, n, w, team);
  const int sweeps = scale == 0 ? 0 : sweep(rows, cols, w, team);
  finish(rows, cols, scale, w, tall ? u : v, tall ? v : u, sigma, team);
  return sweeps > max_sweeps ? sweeps : 0;
}

}  // namespace tprod::backend::cuda::jacobi
