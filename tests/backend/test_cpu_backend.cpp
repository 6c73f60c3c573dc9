// SPDX-License-Identifier: Apache-2.0
// The CPU backend: the threading mechanism, the execution choice, the column-panel facewise kernel and the
// threaded transforms, each checked against an independent computation (plain loops, or the same operation on
// one thread where only the schedule differs).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <atomic>
#include <functional>
#include <bit>
#include <cstdlib>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "tprod/backend/cpu/attention.hpp"
#include "tprod/nn/detail/slice_gemm.hpp"
#include "mode_product_task.hpp"
#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {

/// Sets the process-wide thread count for a scope and restores the default afterwards.
struct threads_for_scope {
  explicit threads_for_scope(std::size_t n) { set_num_threads(n); }
  ~threads_for_scope() { set_num_threads(0); }
};

/// C(:, :, k) = A(:, :, k)·B(:, :, k) with plain loops in complex double.
template <class X, class Y> tensor3<cd> reference_facewise(const X& a, const Y& b) {
  const auto ac = to_cd(a), bc = to_cd(b);
  tensor3<cd> c(ac.m(), bc.n(), ac.p());
  for (std::size_t k = 0; k < ac.p(); ++k)
    for (std::size_t j = 0; j < bc.n(); ++j)
      for (std::size_t q = 0; q < ac.n(); ++q)
        for (std::size_t i = 0; i < ac.m(); ++i) c(i, j, k) += ac(i, q, k) * bc(q, j, k);
  return c;
}

/// |got − want| ≤ tol<R>(n)·max(1, max |want|), entrywise, for Eigen matrices (want in double precision).
template <class R, class A, class B> void check_entrywise_close(const A& got, const B& want, std::size_t n) {
  const double diff = (got - want).cwiseAbs().maxCoeff();
  const double bound = tol<R>(n) * std::max(1.0, want.cwiseAbs().maxCoeff());
  CHECK_MESSAGE(diff <= bound, "max |difference| ", diff, " > ", bound);
}

/// The tube unfolding (m·n)×p of a tensor, in complex double: the operand of a dense reference.
template <class T> detail::dense_matrix<cd> tube_unfolding(const tensor3<T>& t) {
  return Eigen::Map<const detail::dense_matrix<T>>(t.data(), Eigen::Index(t.m() * t.n()), Eigen::Index(t.p()))
      .template cast<cd>();
}

/// Runs check(p, rows, threads) over the DFT tube kernel's cases: odd and even p ≤ 64 (p = 1 and 2 have no sine
/// part), one partial tile, a tile and a row, many tiles on two threads; and, for p = 64, enough rows that a tensor
/// of `row_bytes_at_64` bytes per row exceeds direct_max_bytes, so its tiles go through the panels.
template <class R, class Check>
void for_each_dft_kernel_case(std::size_t row_bytes_at_64, Check check) {
  constexpr std::size_t V = backend::cpu::tube_kernel::tile_rows<R>;
  const std::size_t panel_rows = backend::cpu::tube_kernel::direct_max_bytes / row_bytes_at_64 + V + 5;
  for (std::size_t p : {1, 2, 3, 4, 7, 8, 15, 16, 17, 33, 64}) {
    for (std::size_t rows : {std::size_t(1), V + 1, p == 64 ? panel_rows : std::size_t(1031)}) {
      CAPTURE(p);
      CAPTURE(rows);
      check(p, rows, std::size_t(rows > V + 1 ? 2 : 1));
    }
  }
}

template <class V> concept has_slices = requires(V v) { v.slice(0); };
template <class V> concept has_elements = requires(V v) { v(0, 0, 0); };
template <class V> concept has_tube_matrix = requires(V v) { v.unfold_tubes(); };

}  // namespace

TEST_CASE("parallel_for visits every index once, on up to the requested threads, and rethrows") {
  for (std::size_t threads : {1, 2, 3}) {
    for (std::size_t count : {0, 1, 7, 100}) {
      std::vector<std::atomic<int>> hits(count);
      backend::cpu::parallel_for(count, threads, [&](std::size_t i) { hits[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) CHECK(hits[i].load() == 1);
    }
    std::vector<std::atomic<int>> covered(1000);
    backend::cpu::parallel_ranges(1000, threads, 10, [&](std::size_t b, std::size_t e) {
      CHECK(b < e);
      for (std::size_t i = b; i < e; ++i) covered[i].fetch_add(1);
    });
    for (auto& c : covered) CHECK(c.load() == 1);
    CHECK_THROWS_WITH_AS(backend::cpu::parallel_for(10, threads,
                                                    [](std::size_t i) {
                                                      if (i == 3) throw std::runtime_error("unit 3 failed");
                                                    }),
                         "unit 3 failed", std::runtime_error);
  }
}

TEST_CASE("thread count: set_num_threads, 0 restores the default, TPROD_NUM_THREADS is read") {
  const std::size_t initial = detail::initial_num_threads();
  CHECK(initial >= 1);
  {
    const threads_for_scope t(3);
    CHECK(num_threads() == 3);
    CHECK(execution{}.thread_count() == 3);
    CHECK(execution{transform_path::automatic, 1}.thread_count() == 1);
  }
  CHECK(num_threads() == initial);
  ::setenv("TPROD_NUM_THREADS", "5", 1);
  CHECK(detail::initial_num_threads() == 5);
  ::setenv("TPROD_NUM_THREADS", "zero", 1);  // not a positive integer: ignored
  CHECK(detail::initial_num_threads() == initial);
  ::unsetenv("TPROD_NUM_THREADS");
}

TEST_CASE("execution_scope sets the calling thread's default and restores it, nesting") {
  CHECK(default_execution() == execution{});
  {
    const execution_scope outer(execution{transform_path::gemm, 2});
    CHECK(default_execution().path == transform_path::gemm);
    {
      const execution_scope inner(execution{transform_path::fftw});
      CHECK(default_execution().path == transform_path::fftw);
      CHECK(default_execution().threads == 0);
    }
    CHECK(default_execution() == execution{transform_path::gemm, 2});
  }
  CHECK(default_execution() == execution{});
}

TEST_CASE("column panels: cut only inside Eigen's size cliff, or to give every thread work") {
  using backend::cpu::gemm_panels;
  CHECK(gemm_panels(256, 256, 256, 16, 1) == 2);    // in the cliff: two panels of 128
  CHECK(gemm_panels(300, 300, 300, 16, 2) == 3);
  CHECK(gemm_panels(512, 512, 512, 16, 2) == 1);    // whole GEMMs above the cliff
  CHECK(gemm_panels(1024, 1024, 1024, 1, 2) == 2);  // one slice, two threads
  CHECK(gemm_panels(32, 32, 32, 16, 2) == 1);
  CHECK(gemm_panels(8, 8, 8, 1, 4) == 1);           // never narrower than 32 columns for threads' sake
  CHECK(gemm_panels(64, 64, 100, 1, 4) == 3);
}

TEST_CASE_TEMPLATE("facewise kernel equals plain loops for every panel and thread split", T, TPROD_TEST_SCALARS) {
  struct shape {
    std::size_t m, l, n, p;
  };
  for (const shape s : {shape{1, 1, 1, 1}, shape{3, 5, 2, 4}, shape{40, 30, 300, 2}, shape{260, 20, 260, 1},
                        shape{33, 17, 129, 3}}) {
    const auto a = random_tensor3<T>(s.m, s.l, s.p, 1), b = random_tensor3<T>(s.l, s.n, s.p, 2);
    const auto expected = reference_facewise(a, b);
    for (std::size_t threads : {1, 2, 4}) {
      tensor3<T> c(s.m, s.n, s.p, uninitialized);
      backend::cpu::facewise<T>(a.view(), b.view(), c.view(), threads);
      TPROD_CHECK_CLOSE(c, expected, T, s.l);
    }
  }
}

TEST_CASE_TEMPLATE("products, transforms and factorizations agree on one thread and on several", T,
                   TPROD_TEST_SCALARS) {
  // Sizes above the kernels' parallel thresholds, so that the threaded paths really run.
  const auto a = random_tensor3<T>(72, 64, 16, 3), b = random_tensor3<T>(64, 56, 16, 4);  // 73728 elements
  for_each_transform(16, [&](const auto& l) {
    using L = std::decay_t<decltype(l)>;
    const auto ar = random_for<T>(l, a.extents(), 3), br = random_for<T>(l, b.extents(), 4);
    const auto one = product(execution{default_execution().path, 1}, ar, br, l);
    const auto many = product(execution{default_execution().path, 2}, ar, br, l);
    TPROD_CHECK_CLOSE(many, one, T, 64);
    // Against the slow unoptimized reference once (test_product checks every transform against it): at this size
    // it was most of this test's minute.
    if constexpr (std::is_same_v<L, dct>) TPROD_CHECK_CLOSE(many, reference_product(ar, br, l), T, 64 * 16);
    const auto th1 = transform(execution{default_execution().path, 1}, ar, l);
    const auto th2 = transform(execution{default_execution().path, 3}, ar, l);
    TPROD_CHECK_CLOSE(th2.data(), th1.data(), T, 16);
    if constexpr (std::is_same_v<L, dct>) {
      tensor3<value_type_of<decltype(ar)>> back(ar.extents(), uninitialized);
      inverse_transform_into(execution{default_execution().path, 2}, th2, back);
      TPROD_CHECK_CLOSE(back, ar, T, 16);
    }
  });
  const auto sq = random_tensor3<T>(40, 40, 8, 5);
  std::optional<tensor3<T>> inv_one, s_one;
  for (std::size_t threads : {1, 2}) {
    const threads_for_scope t(threads);
    const auto inv = inverse(sq, dct{});
    const auto s = svd(sq, dct{}).s;
    if (!inv_one) {
      inv_one = inv;
      s_one = s;
    } else {
      TPROD_CHECK_CLOSE(inv, *inv_one, T, 40 * 40);
      TPROD_CHECK_CLOSE(s, *s_one, T, 40 * 40);
    }
  }
}

TEST_CASE_TEMPLATE("singular_values_slices: σ² of every slice are the eigenvalues of its Gram matrix, real slices "
                   "from their real parts", T, TPROD_TEST_SCALARS) {
  // Tall, wide, 1×1, and slices past 16 columns (where BDCSVD leaves Jacobi); 0 slices give no values.
  for (const auto& [m, n, p] : {std::tuple{5, 3, 4}, std::tuple{3, 5, 3}, std::tuple{1, 1, 2}, std::tuple{40, 33, 2},
                                std::tuple{4, 2, 0}}) {
    CAPTURE(shape_string(m, n, p));
    const auto a = random_tensor3<T>(m, n, p, 7 + m);
    const std::vector<char> real_slices = p > 1 ? std::vector<char>{0, 1} : std::vector<char>{};
    const std::size_t r = std::min<std::size_t>(m, n);
    for (std::size_t threads : {1, 2}) {
      const auto sigma = backend::cpu::singular_values_slices(backend::cpu::system{execution{transform_path::automatic, threads}},
                                                              a.dynamic_view(), real_slices);
      REQUIRE(sigma.size() == r * std::size_t(p));
      for (std::size_t k = 0; k < std::size_t(p); ++k) {
        // The slice as the task must factor it: its real part where real_slices says so (complex scalars only).
        detail::dense_matrix<cd> x = Eigen::Map<const detail::dense_matrix<T>>(
            a.data() + k * m * n, Eigen::Index(m), Eigen::Index(n)).template cast<cd>();
        if (is_complex_v<T> && k < real_slices.size() && real_slices[k]) x = x.real().template cast<cd>();
        const detail::dense_matrix<cd> gram = m >= n ? detail::dense_matrix<cd>(x.adjoint() * x)
                                                     : detail::dense_matrix<cd>(x * x.adjoint());
        Eigen::VectorXd lambda = Eigen::SelfAdjointEigenSolver<detail::dense_matrix<cd>>(gram).eigenvalues();
        std::sort(lambda.data(), lambda.data() + lambda.size(), std::greater<>());
        const double scale = std::max(1.0, lambda(0));
        for (std::size_t i = 0; i < r; ++i) {
          const double got = double(sigma[i + k * r]);
          CHECK(got >= 0);
          if (i > 0) CHECK(got <= double(sigma[i - 1 + k * r]));
          CHECK(std::abs(got * got - lambda(Eigen::Index(i))) <= tol<T>(m * n) * scale);
        }
      }
    }
  }
}

TEST_CASE("transform_path::fftw is refused without FFTW, and a general Z always takes the GEMM") {
  const auto a = random_tensor3<double>(3, 2, 8, 1);
  if (!TPROD_HAS_FFTW)
    CHECK_THROWS_WITH_AS(transform(execution{transform_path::fftw}, a, dct{}), doctest::Contains("without FFTW"),
                         shape_error);
  const matrix_transform<double> z(Eigen::MatrixXd::Identity(8, 8) * 2.0);
  const execution automatic{transform_path::automatic};
  CHECK_FALSE(backend::cpu::use_fftw<double>(z, 8, 16, automatic));
  // Forcing FFTW on a transform that has none is refused in every build, not silently run on the GEMM.
  CHECK_THROWS_WITH_AS(transform(execution{transform_path::fftw}, a, z), doctest::Contains("has no FFT"), shape_error);
  CHECK(transform(execution{transform_path::fftw}, a, identity_transform{}).data().size() == a.size());
  CHECK_FALSE(backend::cpu::use_fftw<double>(dct{}, 4096, 16, execution{transform_path::gemm}));
  CHECK(backend::cpu::use_fftw<double>(dft{}, 4096, 16, automatic) == bool(TPROD_HAS_FFTW));  // above the measured range
  CHECK_FALSE(backend::cpu::use_fftw<double>(dft{}, 1, 16, automatic));                       // nothing to transform
  TPROD_CHECK_CLOSE(transform(execution{transform_path::gemm}, a, z).data(), 2.0 * a, double, 8);
}

TEST_CASE("automatic takes the matrix up to 1024 by a fixed rule; tuned measures once per tube length and probe") {
  const execution automatic{transform_path::automatic, 1}, tuned{transform_path::tuned, 1};
  for (std::size_t p : {std::size_t(2), std::size_t(4), std::size_t(96), backend::cpu::measure_max_tubes}) {
    for (const auto& [m, n] : {std::pair<std::size_t, std::size_t>{3, 5}, {16, 4}}) {
      const std::size_t tubes = m * n;
      CAPTURE(p);
      CAPTURE(tubes);
      CHECK(backend::cpu::path_taken<float>(dct{}, p, tubes, automatic) == transform_path::gemm);
      CHECK(backend::cpu::path_taken<float>(dft{}, p, tubes, automatic) == transform_path::gemm);
      const auto first = backend::cpu::path_taken<float>(dct{}, p, tubes, tuned);
      CHECK((first == transform_path::gemm || (TPROD_HAS_FFTW && first == transform_path::fftw)));
      CHECK(backend::cpu::path_taken<float>(dct{}, p, tubes, tuned) == first);  // cached, not measured again
      CHECK(transform(tuned, random_tensor3<float>(m, n, p, 4), dct{}).data().size() == m * n * p);
      const auto a = random_tensor3<float>(m, n, p, 4);
      TPROD_CHECK_CLOSE(transform(a, dct{}).data(), transform(execution{transform_path::gemm}, a, dct{}).data(),
                        float, p);
      TPROD_CHECK_CLOSE(transform(a, dft{}).data(), transform(execution{transform_path::gemm}, a, dft{}).data(),
                        float, p);
    }
  }
}

TEST_CASE("the probe that stands for a tensor has its tube stride's power-of-two alignment, within a budget") {
  const auto two_adic = [](std::size_t x) { return std::min(std::countr_zero(x), 12); };
  for (std::size_t p : {2, 16, 256, 1024}) {
    const std::size_t budget = std::max<std::size_t>(64, (std::size_t(1) << 20) / p);
    for (std::size_t tubes : {1, 7, 64, 1000, 4096, 4097, 20000, 65536, 1 << 20, 3 << 20, 1000003}) {
      CAPTURE(p);
      CAPTURE(tubes);
      const std::size_t probe = backend::cpu::probe_tubes(tubes, p);
      if (tubes <= budget) {
        CHECK(probe == tubes);  // small tensors are measured as they are
        continue;
      }
      CHECK(two_adic(probe) == two_adic(tubes));
      CHECK(probe <= std::max(budget, std::size_t(1) << two_adic(tubes)));
      CHECK(probe * 3 > budget);  // not needlessly small: the largest odd multiple that fits
    }
  }
}

TEST_CASE("views know their memory space: element access and Eigen maps exist on the host only") {
  using host_view = tensor3_view<float>;
  using device_view = tensor3_view<float, dextents3, device_space>;
  static_assert(has_slices<host_view> && has_elements<host_view> && has_tube_matrix<host_view>);
  static_assert(!has_slices<device_view> && !has_elements<device_view> && !has_tube_matrix<device_view>);
  static_assert(!std::is_convertible_v<device_view, host_view>);
  static_assert(!host_tensor3<device_view>);
  const device_view d(nullptr, 2, 3, 4);
  CHECK(d.size() == 24);
}

TEST_CASE_TEMPLATE("nn slice GEMMs by slices and column panels agree with plain loops, on 1 and 3 threads", T, float,
                   double) {
  struct shape {
    std::size_t rows, in, width, c0, q;
  };
  // Eigen's GEMMs and the tube kernel's small GEMM (inner width ≤ 64) in each direction: in = 64, q = 112 (small
  // forward, Eigen dX; 128·64·112 > 2^20: shared by the threads); in = 16, q = 48 with a partial last tile (both
  // small); in = 80, q = 40 (Eigen forward, small dX); 2,500 rows (the kernel through its panels); no rows.
  for (const shape s : {shape{128, 64, 160, 16, 112}, shape{131, 16, 64, 8, 48}, shape{37, 80, 40, 0, 40},
                        shape{2500, 24, 72, 0, 72}, shape{0, 16, 16, 0, 16}})
    for (std::size_t p : {1, 2}) {
      const std::size_t rows = s.rows, in = s.in, width = s.width, c0 = s.c0, q = s.q;
      CAPTURE(rows);
      CAPTURE(in);
      CAPTURE(q);
      CAPTURE(p);
      const auto x = random_tensor3<T>(rows, in, p, 1), w = random_tensor3<T>(in, width, p, 2);
      const auto b = random_tensor3<T>(1, width, p, 3), dy = random_tensor3<T>(rows, q, p, 4);
      const auto dx0 = random_tensor3<T>(rows, in, p, 5);
      // Independent reference: plain loops for Y and dX, Eigen dense matrices for dW and db, slice by slice.
      tensor3<T> y_ref(rows, q, p), dw_ref(in, width, p), db_ref(1, width, p), dx_ref(rows, in, p);
      for (std::size_t k = 0; k < p; ++k) {
        const detail::dense_matrix<T> xk = x.slice(k), wk = w.slice(k).middleCols(Eigen::Index(c0), Eigen::Index(q));
        for (std::size_t i = 0; i < rows; ++i) {
          for (std::size_t j = 0; j < q; ++j) {
            T acc = b(0, c0 + j, k);
            for (std::size_t t = 0; t < in; ++t) acc += xk(Eigen::Index(i), Eigen::Index(t)) * wk(Eigen::Index(t), Eigen::Index(j));
            y_ref(i, j, k) = acc;
          }
          for (std::size_t t = 0; t < in; ++t) {
            T acc = 0;
            for (std::size_t j = 0; j < q; ++j) acc += dy(i, j, k) * wk(Eigen::Index(t), Eigen::Index(j));
            dx_ref(i, t, k) = acc;
          }
        }
        dw_ref.slice(k).middleCols(Eigen::Index(c0), Eigen::Index(q)) = xk.transpose() * dy.slice(k);
        db_ref.slice(k).row(0).segment(Eigen::Index(c0), Eigen::Index(q)) = dy.slice(k).colwise().sum();
      }
      tensor3<T> dx_plus_ref = dx0;
      dx_plus_ref += dx_ref;
      for (std::size_t threads : {1, 3}) {
        const threads_for_scope t(threads);
        tensor3<T> y, dw(in, width, p), db(1, width, p), dx, dx_plus = dx0;
        nn::detail::slice_linear_forward(x, w, b, c0, q, y);
        nn::detail::slice_linear_backward(x, w, dy, c0, &dx, false, dw, db);
        nn::detail::slice_linear_backward(x, w, dy, c0, &dx_plus, true, dw, db);
        TPROD_CHECK_CLOSE(y, y_ref, T, in);
        TPROD_CHECK_CLOSE(dw, dw_ref, T, rows);
        TPROD_CHECK_CLOSE(db, db_ref, T, rows);
        TPROD_CHECK_CLOSE(dx, dx_ref, T, q);
        TPROD_CHECK_CLOSE(dx_plus, dx_plus_ref, T, q);
      }
    }
}

TEST_CASE_TEMPLATE("attention's masked softmax and its backward, column by column, equal plain loops for every "
                   "valid-key count around the packet width", T, float, double) {
  namespace cpu = backend::cpu;
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  constexpr std::size_t W = cpu::detail::softmax_columns::width<T>;
  const T scale = T(0.37);
  // Columns shorter than a packet, of whole packets, and with a partial last packet; masks leaving 0, 1, W − 1,
  // W, W + 1 and all keys valid (key_lengths), and the causal staircase.
  for (const std::size_t tk : {std::size_t(1), W - 1, W, W + 1, 2 * W + 3, std::size_t(50)})
    for (const std::size_t valid : {std::size_t(0), std::size_t(1), W - 1, W, W + 1, tk})
      for (const bool causal : {false, true}) {
        if (valid > tk) continue;
        CAPTURE(tk);
        CAPTURE(valid);
        CAPTURE(causal);
        const std::size_t tq = 7;
        const std::vector<std::size_t> lengths{valid};
        const cpu::attention_masking mask{causal, lengths};
        const cpu::attention_blocks d{1, 1, 1, tq, tk, 4};
        matrix st = 3 * matrix::Random(Eigen::Index(tk), Eigen::Index(tq));
        const matrix scores = st;
        cpu::detail::masked_softmax<T>(Eigen::Map<matrix>(st.data(), st.rows(), st.cols()), scale, mask, d, 0);
        const matrix dp = matrix::Random(Eigen::Index(tk), Eigen::Index(tq));
        matrix ds = dp;
        cpu::softmax_backward<T>(Eigen::Map<const matrix>(st.data(), st.rows(), st.cols()),
                                 Eigen::Map<matrix>(ds.data(), ds.rows(), ds.cols()), scale);
        // Plain loops in double: P = softmax over the column's valid keys of scale·(s − max), 0 elsewhere;
        // dS = scale·P ⊙ (dP − Σ_k P ⊙ dP).
        Eigen::MatrixXd p_ref = Eigen::MatrixXd::Zero(st.rows(), st.cols()), ds_ref(st.rows(), st.cols());
        for (std::size_t t = 0; t < tq; ++t) {
          const std::size_t nv = std::min(valid, causal ? t + 1 : tk);
          double mx = -1e300, sum = 0, c = 0;
          for (std::size_t k = 0; k < nv; ++k) mx = std::max(mx, double(scores(Eigen::Index(k), Eigen::Index(t))));
          for (std::size_t k = 0; k < nv; ++k)
            sum += p_ref(Eigen::Index(k), Eigen::Index(t)) =
                std::exp(double(scale) * (double(scores(Eigen::Index(k), Eigen::Index(t))) - mx));
          for (std::size_t k = 0; k < nv; ++k) p_ref(Eigen::Index(k), Eigen::Index(t)) /= sum;
          for (std::size_t k = 0; k < tk; ++k)
            c += p_ref(Eigen::Index(k), Eigen::Index(t)) * double(dp(Eigen::Index(k), Eigen::Index(t)));
          for (std::size_t k = 0; k < tk; ++k)
            ds_ref(Eigen::Index(k), Eigen::Index(t)) = double(scale) * p_ref(Eigen::Index(k), Eigen::Index(t)) *
                                                       (double(dp(Eigen::Index(k), Eigen::Index(t))) - c);
        }
        check_entrywise_close<T>(st.template cast<double>(), p_ref, 4 * tk);
        check_entrywise_close<T>(ds.template cast<double>(), ds_ref, 4 * tk);
        for (std::size_t t = 0; t < tq; ++t)  // masked keys exactly 0
          for (std::size_t k = std::min(valid, causal ? t + 1 : tk); k < tk; ++k)
            CHECK(st(Eigen::Index(k), Eigen::Index(t)) == T(0));
      }
}

TEST_CASE_TEMPLATE("attention blocks, forward and backward, equal plain loops for heads 1 to 17 wide, masked and "
                   "causal, cross-attention", T, float, double) {
  namespace cpu = backend::cpu;
  constexpr std::size_t W = cpu::detail::softmax_columns::width<T>;
  const std::size_t slices = 2, heads = 2, batch = 2, tq = 5;
  // Heads 1, 4 and 8 wide with up to four key packets take the fused small-head kernels (a last packet of one key:
  // 3W + 1), the others Eigen's GEMMs (3 and 17 wide, or 4W + 1 keys).
  for (const std::size_t dh : {std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(8), std::size_t(17)})
    for (const std::size_t tk : {std::size_t(1), W + 3, 3 * W + 1, 4 * W + 1})
      for (const bool causal : {false, true}) {
        CAPTURE(dh);
        CAPTURE(tk);
        CAPTURE(causal);
        const std::vector<std::size_t> lengths{tk, std::min<std::size_t>(2, tk)};  // the second sequence: 2 keys
        const cpu::attention_masking mask{causal, lengths};
        const cpu::attention_blocks d{slices, heads, batch, tq, tk, dh};
        // Q, dO (and the outputs O, dQ): batch·tq rows per slice; K, V, dK, dV: batch·tk; heads side by side.
        const std::size_t lq = batch * tq, lk = batch * tk, cols = heads * dh;
        const auto q = random_tensor3<T>(lq, cols, slices, 1), k = random_tensor3<T>(lk, cols, slices, 2),
                   v = random_tensor3<T>(lk, cols, slices, 3), d_out = random_tensor3<T>(lq, cols, slices, 4);
        tensor3<T> out(lq, cols, slices), dq(lq, cols, slices), dk(lk, cols, slices), dv(lk, cols, slices);
        const cpu::system sys{execution{transform_path::automatic, 2}};
        tensor3<T> probs(tk, tq, d.blocks()), scratch(tk, tq, cpu::attention_scratch_blocks(sys, d));
        const auto layout = [&](auto& t) {
          using E = std::remove_reference_t<decltype(*t.data())>;
          return cpu::head_layout<E>{t.data(), t.m(), t.m() * t.n(), 0};
        };
        cpu::attention_forward_blocks<T>(sys, d, layout(q), layout(k), layout(v), mask, probs.dynamic_view(),
                                         layout(out), true);
        cpu::attention_backward_blocks<T>(sys, d, layout(q), layout(k), layout(v), std::as_const(probs).dynamic_view(),
                                          layout(d_out), layout(dq), layout(dk), layout(dv), scratch.dynamic_view());
        // In double, block by block: S = K·Qᵀ and dP = V·dOᵀ by products, the softmax and its backward by plain
        // loops down each column (P over the column's valid keys, 0 elsewhere; dS = scale·P ⊙ (dP − Σ_r P ⊙ dP)),
        // then O = Pᵀ·V, dQ = dSᵀ·K, dK = dS·Q, dV = P·dO.
        const double scale = 1 / std::sqrt(double(dh));
        double worst = 0, size = 1;
        const auto compare = [&](const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
          worst = std::max(worst, (got - want).cwiseAbs().maxCoeff());
          size = std::max(size, want.cwiseAbs().maxCoeff());
        };
        using block_map = Eigen::Map<const detail::dense_matrix<T>, 0, Eigen::OuterStride<>>;
        for (std::size_t s = 0; s < slices; ++s)
          for (std::size_t j = 0; j < heads; ++j)
            for (std::size_t b = 0; b < batch; ++b) {
              const std::size_t f = (s * heads + j) * batch + b;
              // Block (s, j, b) of a tensor with `rows` rows per sequence, in double.
              const auto block = [&](const tensor3<T>& t, std::size_t rows) -> Eigen::MatrixXd {
                return block_map(t.data() + s * t.m() * t.n() + j * dh * t.m() + b * rows, Eigen::Index(rows),
                                 Eigen::Index(dh), Eigen::OuterStride<>(Eigen::Index(t.m())))
                    .template cast<double>();
              };
              const Eigen::MatrixXd Q = block(q, tq), K = block(k, tk), V = block(v, tk), DO = block(d_out, tq);
              const Eigen::MatrixXd S = K * Q.transpose(), DP = V * DO.transpose();
              Eigen::MatrixXd P = Eigen::MatrixXd::Zero(Eigen::Index(tk), Eigen::Index(tq)), DS = P;
              for (Eigen::Index t = 0; t < Eigen::Index(tq); ++t) {
                const auto nv = Eigen::Index(std::min(lengths[b], causal ? std::size_t(t) + 1 : tk));
                double mx = -1e300, sum = 0, dot = 0;
                for (Eigen::Index r = 0; r < nv; ++r) mx = std::max(mx, S(r, t));
                for (Eigen::Index r = 0; r < nv; ++r) sum += P(r, t) = std::exp(scale * (S(r, t) - mx));
                for (Eigen::Index r = 0; r < nv; ++r) P(r, t) /= sum;
                for (Eigen::Index r = 0; r < Eigen::Index(tk); ++r) dot += P(r, t) * DP(r, t);
                for (Eigen::Index r = 0; r < Eigen::Index(tk); ++r) DS(r, t) = scale * P(r, t) * (DP(r, t) - dot);
              }
              compare(Eigen::Map<const detail::dense_matrix<T>>(probs.data() + f * tk * tq, Eigen::Index(tk),
                                                                 Eigen::Index(tq))
                          .template cast<double>(),
                      P);
              compare(block(out, tq), P.transpose() * V);
              compare(block(dq, tq), DS.transpose() * K);
              compare(block(dk, tk), DS * Q);
              compare(block(dv, tk), P * DO);
            }
        CHECK_MESSAGE(worst <= tol<T>(4 * (tk + dh)) * size, "max |difference| ", worst);
      }
}

TEST_CASE_TEMPLATE("tube kernel: the split DCT and OUT = IN·Mt equal Eigen's products for p ≤ 64, tile and panel", R,
                   float, double) {
  using backend::cpu::tube_dct;
  using backend::cpu::tube_multiply;
  using map = Eigen::Map<const detail::dense_matrix<R>>;
  // |got − want| ≤ tol<R>(n)·max(1, max |want|), entrywise.
  const auto close = [](const tensor3<R>& got, const detail::dense_matrix<double>& want, std::size_t n) {
    const auto g = map(got.data(), want.rows(), want.cols()).template cast<double>();
    const double diff = (g - want).cwiseAbs().maxCoeff(), bound = tol<R>(n) * std::max(1.0, want.cwiseAbs().maxCoeff());
    CHECK_MESSAGE(diff <= bound, "max |difference| ", diff, " > ", bound);
  };
  // Rows: one partial tile, one tile and one row, several panels with a partial last one (tests run at -O0: few).
  // Out of place these run their tiles in the tensor's own memory; in place, tube_multiply's p = 24 and 64 go
  // through panels (the two paths on their own: the next test case), the DCT's never. The DCT's tiles (dct_plan::V
  // rows) are taller than the GEMM's (tile_rows): one row over each.
  constexpr std::size_t V = backend::cpu::tube_kernel::tile_rows<R>;
  constexpr std::size_t V_dct = backend::cpu::tube_kernel::dct_plan<R>::V;
  for (std::size_t rows : {std::size_t(1), V + 1, V_dct + 1, std::size_t(1031)}) {
    for (std::size_t p : {2, 3, 8, 16, 24, 64}) {  // 8 and up: the DCT splits once or more
      CAPTURE(rows);
      CAPTURE(p);
      const auto x = random_tensor3<R>(rows, 1, p, 7 * p + rows);
      const auto xm = map(x.data(), Eigen::Index(rows), Eigen::Index(p)).template cast<double>().eval();
      const detail::dense_matrix<double> expected = xm * dct::matrix(p).transpose();  // Y = X·Φᵀ
      const std::size_t threads = rows > V + 1 ? 2 : 1;
      tensor3<R> y(rows, 1, p), back(rows, 1, p);
      tube_dct<R>(x.data(), y.data(), rows, p, true, threads);
      close(y, expected, 2 * p);
      tube_dct<R>(y.data(), back.data(), rows, p, false, threads);
      TPROD_CHECK_CLOSE(back, x, R, 4 * p);
      auto in_place = x;  // in == out
      tube_dct<R>(in_place.data(), in_place.data(), rows, p, true, threads);
      CHECK(max_diff(in_place, y) == 0.0);
      // OUT = IN·Mt with q ≠ p outputs (a rectangular factor), and in place with q = p.
      for (std::size_t q : {p, std::min<std::size_t>(64, p + 3)}) {
        const detail::dense_matrix<R> mt =
            detail::dense_matrix<double>::Random(Eigen::Index(p), Eigen::Index(q)).cast<R>();
        tensor3<R> out(rows, 1, q);
        tube_multiply<R>(x.data(), mt, out.data(), rows, threads);
        const detail::dense_matrix<double> ref = xm * mt.template cast<double>();
        close(out, ref, 2 * p);
        if (q == p) {
          auto io = x;
          tube_multiply<R>(io.data(), mt, io.data(), rows, threads);
          CHECK(max_diff(io, out) == 0.0);
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("tube kernel: the real DFT equals the dense F_p in double, its inverse Re(Ŷ·N), p ≤ 64", R, float,
                   double) {
  using backend::cpu::tube_real_dft;
  using backend::cpu::tube_real_idft;
  using C = std::complex<R>;
  // At p = 64 a row is 33 complex outputs, the widest side.
  for_each_dft_kernel_case<R>(33 * sizeof(C), [](std::size_t p, std::size_t rows, std::size_t threads) {
    const std::size_t q = p / 2 + 1;
    const auto x = random_tensor3<R>(rows, 1, p, 11 * p + rows);
    tensor3<C> y(rows, 1, q);
    tube_real_dft<R>(x.data(), y.data(), rows, p, threads);
    const detail::dense_matrix<cd> f = dft::matrix(p);  // F_p (symmetric): Ŷ = X·F_p, its first q columns
    check_entrywise_close<R>(tube_unfolding(y), (tube_unfolding(x) * f.leftCols(Eigen::Index(q))).eval(), 2 * p);
    // The inverse of a half spectrum that is not one (random imaginary parts in slices 0 and p/2 too):
    // x_j = Re Σ_k Ŷ_k·N(k, j), N(k, j) = w_k/p·e^{2πi·jk/p} (dft::inverse_factor, built here in double).
    const auto z = random_tensor3<C>(rows, 1, q, 5 * p + rows);
    detail::dense_matrix<cd> n{Eigen::Index(q), Eigen::Index(p)};
    for (std::size_t k = 0; k < q; ++k)
      for (std::size_t j = 0; j < p; ++j)
        n(Eigen::Index(k), Eigen::Index(j)) = dft{}.slice_weight<R>(k, p) / double(p) * dft::root(j * k, p, 1.0);
    tensor3<R> back(rows, 1, p);
    tube_real_idft<R>(z.data(), back.data(), rows, p, threads);
    check_entrywise_close<R>(tube_unfolding(back).real(), (tube_unfolding(z) * n).real().eval(), 2 * p);
    tube_real_idft<R>(y.data(), back.data(), rows, p, threads);  // the round trip
    TPROD_CHECK_CLOSE(back, x, R, 4 * p);
  });
}

TEST_CASE_TEMPLATE("tube kernel: the complex DFT and its inverse equal F_p and F_pᴴ/p in double, also in place", R,
                   float, double) {
  using backend::cpu::tube_complex_dft;
  using C = std::complex<R>;
  for_each_dft_kernel_case<R>(64 * sizeof(C), [](std::size_t p, std::size_t rows, std::size_t threads) {
    const detail::dense_matrix<cd> f = dft::matrix(p);  // symmetric: Ẑ = Z·F_p, Z = Ẑ·F_pᴴ/p
    const auto z = random_tensor3<C>(rows, 1, p, 13 * p + rows);
    tensor3<C> y(rows, 1, p), back(rows, 1, p);
    tube_complex_dft<R>(z.data(), y.data(), rows, p, true, threads);
    check_entrywise_close<R>(tube_unfolding(y), (tube_unfolding(z) * f).eval(), 2 * p);
    const auto w = random_tensor3<C>(rows, 1, p, 3 * p + rows);  // any spectrum: no symmetry to rely on
    tube_complex_dft<R>(w.data(), back.data(), rows, p, false, threads);
    check_entrywise_close<R>(tube_unfolding(back), (tube_unfolding(w) * f.adjoint() / double(p)).eval(), 2 * p);
    auto io = z;  // in place, forward and back
    tube_complex_dft<R>(io.data(), io.data(), rows, p, true, threads);
    CHECK(max_diff(io, y) == 0.0);
    tube_complex_dft<R>(io.data(), io.data(), rows, p, false, threads);
    TPROD_CHECK_CLOSE(io, z, R, 4 * p);
  });
}

TEST_CASE_TEMPLATE("tube kernel tiles: in the tensor's memory and through panels, in and out of place", R, float,
                   double) {
  namespace tk = backend::cpu::tube_kernel;
  constexpr std::size_t V = tk::tile_rows<R>;
  // A tile that shows which rows and columns it was given: dst column k = (k + 1)·src column (k mod p).
  const auto run = [](std::vector<R>& in, int p, std::vector<R>* out, int q, std::size_t rows) {
    R* dst = out ? out->data() : in.data();
    tk::for_each_tile<R>(in.data(), p, dst, q, rows, 2, [&](tk::columns<const R> src, tk::columns<R> d) {
      for (int k = 0; k < q; ++k)
        for (std::size_t r = 0; r < V; ++r) d.col(k)[r] = R(k + 1) * src.col(k % p)[r];
    });
  };
  // 17 columns and rows·17 elements over direct_max_bytes take the panels; 16 columns, or a small tensor, not.
  const std::size_t panel_rows = tk::direct_max_bytes / sizeof(R) / 17 + 3 * V + 5;
  for (const auto& [rows, p, q] : {std::tuple{panel_rows, 17, 17}, std::tuple{panel_rows, 16, 16},
                                   std::tuple{5 * V + 3, 17, 17}, std::tuple{5 * V + 3, 3, 5}}) {
    CAPTURE(rows);
    CAPTURE(p);
    std::vector<R> in(rows * std::size_t(p)), out(rows * std::size_t(q), R(-1));
    for (std::size_t e = 0; e < in.size(); ++e) in[e] = R(e % 1009);
    std::vector<R> expected(out.size());
    for (int k = 0; k < q; ++k)
      for (std::size_t r = 0; r < rows; ++r)
        expected[r + std::size_t(k) * rows] = R(k + 1) * in[r + std::size_t(k % p) * rows];
    run(in, p, &out, q, rows);
    CHECK(out == expected);
    if (p == q) {
      run(in, p, nullptr, q, rows);  // in place
      CHECK(in == expected);
    }
  }
}

TEST_CASE_TEMPLATE("tube kernel through the public transforms: many tubes, complex data, short and long p", T,
                   TPROD_TEST_SCALARS) {
  // 23·19 = 437 tubes: full panels and a partial one, on the kernel's path for p ≤ 64 and Eigen's above.
  for (std::size_t p : {4, 16, 64, 66}) {
    CAPTURE(p);
    const auto a = random_tensor3<T>(23, 19, p, p);
    const execution gemm{transform_path::gemm, 2};
    const detail::dense_matrix<double> phi = dct::matrix(p), general = phi + phi.transpose() * 0.5;
    const matrix_transform l(general);
    TPROD_CHECK_CLOSE(transform(gemm, a, l).data(), reference_mode3(to_cd(a), reference_z(l, p)), T, 4 * p);
    const auto ah = transform(gemm, a, dct{});
    TPROD_CHECK_CLOSE(ah.data(), reference_mode3(to_cd(a), reference_z(dct{}, p)), T, 4 * p);
    TPROD_CHECK_CLOSE(inverse_transform(gemm, ah), a, T, 4 * p);
    // The DFT: real tensors store the first ⌊p/2⌋ + 1 slices, complex ones all p.
    const auto af = transform(gemm, a, dft{});
    const auto full = reference_mode3(to_cd(a), reference_z(dft{}, p));
    for (std::size_t k = 0; k < af.stored_slices(); ++k)
      CHECK((af.slice(k).template cast<cd>() - full.slice(k)).cwiseAbs().maxCoeff() <= tol<T>(4 * p) * max_abs(full));
    TPROD_CHECK_CLOSE(inverse_transform(gemm, af), a, T, 4 * p);
  }
}

TEST_CASE_TEMPLATE("the CPU mode-product task refuses a bad mode or shape as every backend does", T, double,
                   std::complex<float>) {
  check_mode_product_task_refusals<T, host_space>();
}
