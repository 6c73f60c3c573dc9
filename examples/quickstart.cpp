// SPDX-License-Identifier: Apache-2.0
// quickstart: the L-product of the same tensors under the DCT, the DFT and a user-supplied Z; the identity,
// associativity and transpose residuals of each; and the time of one 256×256×256, p = 16 product beside the
// time of its 16 plain GEMMs on as many threads; and, when tprod was built with its CUDA backend and a GPU is present, the same
// product on the GPU, checked against the CPU's (it says so when there is no GPU).
#include <tprod/tprod.hpp>
#if TPROD_HAS_CUDA
#include <tprod/cuda.hpp>
#endif

#include <chrono>
#include <cstdio>
#include <string>

namespace {

template <class L>
void residuals(const char* name, const L& policy) {
  const std::size_t m = 6, l = 5, n = 4, p = 8;
  const auto a = tprod::random_tensor3<double>(m, l, p, 1);
  const auto b = tprod::random_tensor3<double>(l, n, p, 2);
  const auto c = tprod::random_tensor3<double>(n, 3, p, 3);

  const auto ab = tprod::product(a, b, policy);  // A *_L B, 6×4×8
  const double identity = tprod::frobenius_norm(tprod::product(a, tprod::identity<double>(l, p, policy), policy) - a);
  const double associativity = tprod::frobenius_norm(tprod::product(ab, c, policy) -
                                                     tprod::product(a, tprod::product(b, c, policy), policy));
  const double transpose = tprod::frobenius_norm(tprod::transpose(ab, policy) -
                                                 tprod::product(tprod::transpose(b, policy), tprod::transpose(a, policy), policy));
  std::printf("%-28s ||A*B||=%8.4f  ||A*I-A||=%.1e  ||(A*B)*C-A*(B*C)||=%.1e  ||(A*B)^T-B^T*A^T||=%.1e\n", name,
              tprod::frobenius_norm(ab), identity, associativity, transpose);
}

template <class F>
double best_ms(F&& f, int repeats = 5) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

/// The same L-product on the GPU, checked against the CPU's result, and its time (device work, waited for).
void on_the_gpu(const tprod::tensor3<float>& a, const tprod::tensor3<float>& b, const tprod::tensor3<float>& c) {
#if TPROD_HAS_CUDA
  const int devices = tprod::cuda::device_count();
  if (devices == 0) {
    std::printf("GPU: tprod was built with CUDA, but no CUDA device is present here: the products ran on the CPU only\n");
    return;
  }
  const auto da = tprod::to_device(a), db = tprod::to_device(b);
  tprod::device_tensor3<float> dc = tprod::product(da, db, tprod::dct{});  // the same call, on device tensors
  const double difference = tprod::frobenius_norm(tprod::to_host(dc) - c) / tprod::frobenius_norm(c);
  const double ms = best_ms([&] {
    dc = tprod::product(da, db, tprod::dct{});
    tprod::cuda::synchronize();
  });
  const double gflop = 2.0 * double(a.m() * a.n() * b.n() * a.p()) * 1e-9;
  std::printf("GPU (%d device%s): the same L-product %.3f ms (%.0f GFLOP/s), relative difference to the CPU's %.1e\n",
              devices, devices == 1 ? "" : "s", ms, gflop / ms * 1e3, difference);
#else
  (void)a, (void)b, (void)c;
  std::printf("GPU: this build has no CUDA backend (configure with -DTPROD_ENABLE_CUDA=ON where nvcc is installed)\n");
#endif
}

}  // namespace

int main() {
  std::printf("tprod %s: residuals of the L-product identities (double, A 6x5x8, B 5x4x8, C 4x3x8)\n",
              TPROD_VERSION_STRING);
  residuals("DCT (cosine product)", tprod::dct{});
  residuals("DFT (t-product)", tprod::dft{});
  // A user-supplied invertible Z: a random, diagonally dominated 8×8 matrix.
  const Eigen::MatrixXd z = Eigen::MatrixXd::Random(8, 8) + 4.0 * Eigen::MatrixXd::Identity(8, 8);
  const tprod::matrix_transform user_z(z);
  residuals(("user Z (cond ~ " + std::to_string(int(user_z.condition())) + ")").c_str(), user_z);

  // One 256×256×256, p = 16 float product under the DCT next to its 16 plain GEMMs on the same data.
  const std::size_t s = 256, p = 16;
  const auto a = tprod::random_tensor3<float>(s, s, p, 4), b = tprod::random_tensor3<float>(s, s, p, 5);
  tprod::tensor3<float> c(s, s, p);
  const double t_product = best_ms([&] { c = tprod::product(a, b, tprod::dct{}); });
  // The GEMMs on as many threads as the product (Eigen's own threading, which tprod otherwise keeps at 1).
  const int threads = int(tprod::num_threads());
  Eigen::setNbThreads(threads);
  const double t_gemms = best_ms([&] {
    for (std::size_t k = 0; k < p; ++k) c.slice(k).noalias() = a.slice(k) * b.slice(k);
  });
  Eigen::setNbThreads(1);
  const double gflop = 2.0 * double(s * s * s * p) * 1e-9;
  std::printf("\nfloat 256x256x256, p=16 under the DCT, %d thread%s: L-product %.2f ms (%.1f GFLOP/s); its 16 GEMMs "
              "alone %.2f ms (%.1f GFLOP/s), %.0f%% of the product's time\n",
              threads, threads == 1 ? "" : "s", t_product, gflop / t_product * 1e3, t_gemms, gflop / t_gemms * 1e3,
              100.0 * t_gemms / t_product);
  on_the_gpu(a, b, tprod::product(a, b, tprod::dct{}));
  return 0;
}
