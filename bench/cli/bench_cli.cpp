// SPDX-License-Identifier: Apache-2.0
// What the tprod program costs over the library: a 256×256×16 L-product (DCT) run as
//  - library_product:     tprod::product on tensors already in memory (the library call);
//  - library_product_io:  read A.npy and B.npy, tprod::product, write C.npy atomically, in this process;
//  - cli_product:         `tprod product A.npy B.npy -o C.npy`, a fresh process each time (start-up, parsing,
//                         reading, computing, writing and fsync included).
// The program is found through $TPROD_CLI, else beside this benchmark in the build tree (../tools/tprod).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "bench_names.hpp"
#include "tprod/algebra/extern_templates.hpp"  // measured as users get them: compiled in tprod::instances
#include "tprod/algebra/product.hpp"
#include "tprod/core/random.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/io.hpp"

namespace {

namespace fs = std::filesystem;

fs::path program() {
  if (const char* env = std::getenv("TPROD_CLI")) return env;
  return fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" / "tprod";
}

/// Scratch directories holding A.npy and B.npy, one per scalar and shape, removed at exit.
struct scratch {
  std::map<std::string, fs::path> dirs;
  ~scratch() {
    for (const auto& [key, d] : dirs) fs::remove_all(d);
  }
};

template <class T>
fs::path inputs(std::size_t s, std::size_t p) {
  static scratch made;
  const std::string key = std::to_string(sizeof(T)) + "-" + std::to_string(s) + "-" + std::to_string(p);
  auto it = made.dirs.find(key);
  if (it != made.dirs.end()) return it->second;
  const fs::path d = fs::temp_directory_path() / ("tprod-bench-cli-" + std::to_string(::getpid()) + "-" + key);
  fs::create_directories(d);
  tprod::io::write_npy(d / "A.npy", tprod::random_tensor3<T>(s, s, p, 1));
  tprod::io::write_npy(d / "B.npy", tprod::random_tensor3<T>(s, s, p, 2));
  return made.dirs[key] = d;
}

template <class T>
void library_product(benchmark::State& state, std::size_t s, std::size_t p) {
  const auto a = tprod::random_tensor3<T>(s, s, p, 1), b = tprod::random_tensor3<T>(s, s, p, 2);
  for (auto _ : state) {
    auto c = tprod::product(a, b, tprod::dct{});
    benchmark::DoNotOptimize(c.data());
  }
}

template <class T>
void library_product_io(benchmark::State& state, std::size_t s, std::size_t p) {
  const fs::path d = inputs<T>(s, p);
  for (auto _ : state) {
    const auto a = tprod::io::read_tensor3<T>(d / "A.npy"), b = tprod::io::read_tensor3<T>(d / "B.npy");
    tprod::io::write_npy(d / "C_lib.npy", tprod::product(a, b, tprod::dct{}));
  }
}

template <class T>
void cli_product(benchmark::State& state, std::size_t s, std::size_t p) {
  const fs::path d = inputs<T>(s, p);
  const std::string exe = program().string(), a = (d / "A.npy").string(), b = (d / "B.npy").string(),
                    c = (d / "C_cli.npy").string();
  if (!fs::exists(exe)) {
    state.SkipWithError(("the tprod program is not at " + exe + " (build tprod_cli or set TPROD_CLI)").c_str());
    return;
  }
  for (auto _ : state) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(exe.c_str(), exe.c_str(), "product", a.c_str(), b.c_str(), "-o", c.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("tprod product failed");
      break;
    }
  }
}

template <class T>
void register_all(const std::string& type, std::size_t s, std::size_t p) {
  const std::string sh = bench::shape_name(s, s, p) + "_" + type;
  benchmark::RegisterBenchmark(("library_product/dct/" + sh).c_str(),
                               [=](benchmark::State& st) { library_product<T>(st, s, p); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("library_product_io/dct/" + sh).c_str(),
                               [=](benchmark::State& st) { library_product_io<T>(st, s, p); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("cli_product/dct/" + sh).c_str(), [=](benchmark::State& st) { cli_product<T>(st, s, p); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();  // the work happens in the child process
}

const bool registered = [] {
  register_all<float>("f32", 256, 16);
  register_all<double>("f64", 256, 16);
  register_all<float>("f32_smoke", 16, 4);  // the CI smoke run
  return true;
}();

}  // namespace
