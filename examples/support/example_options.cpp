// SPDX-License-Identifier: Apache-2.0
// The examples' command-line options (example_options.hpp), compiled once into the examples' support library.
#include "support/example_options.hpp"

namespace tprod::examples {

double options::number(const std::string& key, double fallback) const {
  const auto it = extra.find(key);
  if (it == extra.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0')
    throw std::invalid_argument("--" + key + " expects a number, got '" + it->second + "'");
  return v;
}

std::size_t options::count(const std::string& key, double fallback) const {
  const double v = number(key, fallback);
  if (!(v >= 1) || v != double(std::size_t(v)))
    throw std::invalid_argument("--" + key + " expects a positive integer, got " + extra.at(key));
  return std::size_t(v);
}

options parse_options(int argc, char** argv, const std::string& example, const std::string& what,
                      const std::filesystem::path& default_data, const std::vector<std::pair<std::string, std::string>>& own) {
  options o;
  o.example = example;
  o.data = default_data;
  o.out = std::filesystem::path("example-output") / example;
  const auto usage = [&](std::ostream& s) {
    s << "usage: " << example
      << " [--quick] [--resume] [--zero-gradients] [--data DIR] [--out DIR] [--summary FILE] [--threads N] [--epochs N]"
         " [--seed S] [--seeds N]";
    for (const auto& [k, _] : own) s << " [--" << k << " V]";
    s << "\n" << what << "\n  --quick         a small run (CI)\n  --data DIR      the data (default " << default_data.string()
      << ")\n  --out DIR       logs, plot and checkpoints (default " << o.out.string()
      << ")\n  --summary FILE  write the run's summary as JSON\n  --threads N     worker threads (default: all cores)\n"
         "  --epochs N      number of epochs\n"
         "  --seed S        the first seed: initialisation, dropout, batch order (default 1)\n"
         "  --seeds N       train every model from N seeds S, S+1, ... and report mean and sd (default 3; quick 1)\n"
         "  --resume        continue every model from its training state in OUT/state (or start it when it has none)\n"
         "  --zero-gradients  zero every gradient before each optimizer step (a diagnostic: nothing is learned)\n";
    for (const auto& [k, h] : own) s << "  --" << k << "  " << h << "\n";
  };
  std::optional<std::size_t> seeds;
  std::set<std::string> known;
  for (const auto& [k, _] : own) known.insert(k);
  const auto fail = [&](const std::string& why) {
    std::cerr << example << ": " << why << "\n";
    usage(std::cerr);
    std::exit(2);
  };
  const auto count = [&](const std::string& key, const std::string& v) {
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n <= 0) fail("--" + key + " expects a positive integer, got '" + v + "'");
    return std::size_t(n);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(std::cout);
      std::exit(0);
    }
    if (a == "--quick" || a == "--zero-gradients" || a == "--resume") {
      (a == "--quick" ? o.quick : a == "--resume" ? o.resume : o.zero_gradients) = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) fail("unexpected argument '" + a + "'");
    const std::string key = a.substr(2);
    if (i + 1 >= argc) fail(a + " needs a value");
    const std::string v = argv[++i];
    if (key == "data") o.data = v;
    else if (key == "out") o.out = v;
    else if (key == "summary") o.summary = v;
    else if (key == "threads") set_num_threads(count(key, v));
    else if (key == "epochs") o.epochs = count(key, v);
    else if (key == "seed") o.seed = count(key, v);
    else if (key == "seeds") seeds = count(key, v);
    else if (known.count(key)) o.extra[key] = v;
    else fail("unknown option '" + a + "'");
  }
  o.seeds = seeds.value_or(o.quick ? 1 : 3);
  std::filesystem::create_directories(o.out);
  return o;
}

}  // namespace tprod::examples
