// SPDX-License-Identifier: Apache-2.0
// Device tensors: storage, explicit copies between spaces, arithmetic, streams, random tensors and the errors.
#include <cuda_runtime_api.h>

#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "cuda_test.hpp"
#include "tprod/nn/embedding.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {
/// A user's stream for one test, destroyed when the test ends (the tensors allocated on it live in an inner scope,
/// so they are freed on it first).
class user_stream {
 public:
  explicit user_stream(unsigned flags) { REQUIRE(cudaStreamCreateWithFlags(&stream_, flags) == cudaSuccess); }
  ~user_stream() { cudaStreamDestroy(stream_); }
  user_stream(const user_stream&) = delete;
  user_stream& operator=(const user_stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};
}  // namespace

TEST_CASE_TEMPLATE("device tensor3: copies round-trip exactly and a new tensor is zero", T, TPROD_DEVICE_SCALARS) {
  for (const auto& [m, n, p] : {std::tuple{3, 5, 4}, std::tuple{1, 1, 1}, std::tuple{7, 2, 17}, std::tuple{0, 3, 2}}) {
    const auto a = random_tensor3<T>(m, n, p, 1);
    const device_tensor3<T> d = to_device(a);
    CHECK(d.shape() == a.shape());
    const tensor3<T> back = to_host(d);
    CHECK(back.shape() == a.shape());
    for (std::size_t e = 0; e < a.size(); ++e) CHECK(back.data()[e] == a.data()[e]);
    const device_tensor3<T> copied = d;  // a device-to-device deep copy
    CHECK(frobenius_norm(to_host(copied) - a) == 0);
    const device_tensor3<T> zero(m, n, p);
    CHECK(frobenius_norm(to_host(zero)) == 0);
    // the device sums in another order than the host: equal up to the roundings of a sum of a.size() squares
    const double host_norm = double(frobenius_norm(a));
    CHECK(std::abs(double(frobenius_norm(copy(a, device_space{}))) - host_norm) <=
          double(tol<T>(a.size())) * (host_norm + 1));
  }
}

TEST_CASE_TEMPLATE("device tensor3: fixed extents are kept through copies", T, TPROD_DEVICE_SCALARS) {
  const tensor3<T, extents3<2, 3, 4>> a = tensor3<T, extents3<2, 3, 4>>(random_tensor3<T>(2, 3, 4, 2).view());
  const auto d = to_device(a);
  static_assert(std::same_as<std::remove_cvref_t<decltype(d)>, tensor3<T, extents3<2, 3, 4>, device_space>>);
  const auto h = to_host(d);
  static_assert(std::same_as<std::remove_cvref_t<decltype(h)>, tensor3<T, extents3<2, 3, 4>>>);
  CHECK(frobenius_norm(tensor3<T>(h.view()) - tensor3<T>(a.view())) == 0);
}

TEST_CASE_TEMPLATE("device tensor3: arithmetic equals the host's", T, TPROD_DEVICE_SCALARS) {
  const auto a = random_tensor3<T>(4, 3, 5, 3), b = random_tensor3<T>(4, 3, 5, 4);
  const auto da = to_device(a), db = to_device(b);
  const T s = T(0.75);
  check_close(a + b, da + db, 1);
  check_close(a - b, da - db, 1);
  check_close(s * a, s * da, 1);
  check_close(a * s, da * s, 1);
  check_close(-a, -da, 1);
  auto dc = da;
  dc += db;
  dc -= da;
  check_close(b, dc, 2);
}

TEST_CASE("device tensor3: mismatched shapes are refused by name") {
  device_tensor3<double> a(2, 3, 4), b(3, 2, 4);
  CHECK_THROWS_WITH_AS(a += b, doctest::Contains("2x3x4"), shape_error);
}

TEST_CASE("device tensor3: an absurd allocation is a cuda_error naming the size, not a crash") {
  const std::size_t huge = std::size_t(1) << 50;  // 8 PiB of doubles
  CHECK_THROWS_WITH_AS(device_tensor3<double>(huge, 1, 1, uninitialized), doctest::Contains("cudaMallocAsync"), cuda_error);
  CHECK_THROWS_AS(device_tensor3<double>(std::numeric_limits<std::size_t>::max() / 2, 1, 1, uninitialized),
                  std::bad_array_new_length);
}

TEST_CASE("device tensor3: work on a user's stream gives the same result") {
  const user_stream stream(cudaStreamDefault);
  const cuda::execution ex{stream.get()};
  const auto a = random_tensor3<double>(6, 5, 8, 5), b = random_tensor3<double>(5, 4, 8, 6);
  {
    const cuda::execution_scope scope(ex);  // allocations and defaults on the stream
    const auto da = to_device(a, ex), db = to_device(b, ex);
    const auto dc = product(ex, da, db, dct{});
    check_close(product(a, b, dct{}), dc, 16);
  }
}

TEST_CASE("device transforms on a non-blocking stream read their factor only once it is uploaded") {
  // A new matrix_transform's factor is uploaded when first used; the legacy default stream orders nothing on a
  // non-blocking stream, so the upload must be complete before the call returns. Fresh factors each time, large
  // enough (256×256 doubles, 512 KiB) that a copy still in flight would be seen.
  const user_stream stream(cudaStreamNonBlocking);
  const cuda::execution ex{stream.get()};
  {
    const cuda::execution_scope scope(ex);
    const auto a = random_tensor3<double>(8, 4, 256, 7);
    const auto da = to_device(a, ex);
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      Eigen::MatrixXd z = Eigen::MatrixXd::Identity(256, 256) + 0.01 * random_tensor3<double>(256, 256, 1, seed).slice(0);
      const matrix_transform<double> l(z);
      check_close(transform(a, l).data(), transform(ex, da, l).data(), 256);
    }
  }
}

TEST_CASE("device uploads staged behind a busy stream keep their contents over several laps of the staging ring") {
  // Small host-to-device copies (here the token lists of embedding lookups, 96 KiB each) go through a 1 MiB pinned
  // ring without waiting for the stream. The stream is held up by a host function, so 48 lookups (4.5 laps) are
  // queued before any copy runs: a region reused before its copy ran would give some lookup another's tokens.
  const user_stream stream(cudaStreamNonBlocking);
  const cuda::execution ex{stream.get()};
  {
    const cuda::execution_scope scope(ex);
    const auto e = nn::make_embedding_params<float>(64, 2, 3);
    const auto de = nn::copy(e, device_space{});
    const auto hold = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); };
    REQUIRE(cudaLaunchHostFunc(stream.get(), hold, nullptr) == cudaSuccess);
    std::vector<std::vector<std::size_t>> lists;
    std::vector<device_tensor3<float>> outs;
    for (std::size_t i = 0; i < 48; ++i) {
      std::vector<std::size_t> tokens(12000);
      for (std::size_t t = 0; t < tokens.size(); ++t) tokens[t] = (t * 7 + i * 13) % 64;
      outs.push_back(nn::embedding_forward(de, tokens, 1));
      lists.push_back(std::move(tokens));
    }
    cuda::synchronize(ex);
    for (std::size_t i = 0; i < lists.size(); ++i) {
      CAPTURE(i);
      const tensor3<float> host = nn::embedding_forward(e, lists[i], 1);
      CHECK(to_host(outs[i]).elements() == host.elements());  // a gather: exact
    }
  }
}

TEST_CASE_TEMPLATE("device random tensors: seeded, uniform in [-1, 1]", T, TPROD_DEVICE_SCALARS) {
  const auto x = to_host(cuda::random_tensor3<T>(64, 32, 8, 42));
  const auto y = to_host(cuda::random_tensor3<T>(64, 32, 8, 42));
  const auto z = to_host(cuda::random_tensor3<T>(64, 32, 8, 43));
  CHECK(frobenius_norm(x - y) == 0);
  CHECK(frobenius_norm(x - z) > 0);
  real_t<T> lo = 1, hi = -1;
  for (std::size_t e = 0; e < x.size(); ++e) {
    lo = std::min(lo, std::real(x.data()[e]));
    hi = std::max(hi, std::real(x.data()[e]));
  }
  CHECK(lo >= real_t<T>(-1));
  CHECK(hi <= real_t<T>(1));
  CHECK(lo < real_t<T>(-0.9));  // 16k draws: both ends are reached
  CHECK(hi > real_t<T>(0.9));
}

TEST_CASE("cuda: device_count sees the GPU and require_device passes") {
  CHECK(cuda::device_count() >= 1);
  CHECK_NOTHROW(cuda::require_device());
}
