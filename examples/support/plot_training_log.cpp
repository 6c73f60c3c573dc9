// SPDX-License-Identifier: Apache-2.0
// plot_training_log: draws a training example's curves again from its training_log.csv, the same plot the example
// draws at the end of its run (test accuracy or perplexity and training loss per epoch, mean ± sd over the seeds).
// For runs made where gnuplot is missing, such as the GPU machines that scripts/gpu-bundle.sh --papers runs on.
//
//   plot_training_log --log training_log.csv --png curves.png --title TEXT [--perplexity]
#include <exception>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "support/training_report.hpp"

namespace {

int run(int argc, char** argv) {
  std::string log_file, png, title;
  bool perplexity = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: plot_training_log --log CSV --png PNG --title TEXT [--perplexity]\n";
      return 0;
    }
    if (a == "--perplexity") {
      perplexity = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--log")
      log_file = v;
    else if (a == "--png")
      png = v;
    else if (a == "--title")
      title = v;
    else
      throw std::invalid_argument("unknown option '" + a + "'");
  }
  if (log_file.empty() || png.empty()) throw std::invalid_argument("--log CSV and --png PNG are required");
  const auto log = tprod::examples::training_log::read(log_file);
  if (log.rows().empty()) throw std::runtime_error(log_file + ": no rows to plot");
  const auto curve = perplexity ? tprod::examples::test_curve::perplexity : tprod::examples::test_curve::accuracy;
  const auto target = std::filesystem::absolute(png);
  return tprod::examples::plot_training_curves(log, target, title.empty() ? log_file : title, curve) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "plot_training_log: error: " << e.what() << "\n";
    return 1;
  }
}
