// SPDX-License-Identifier: Apache-2.0
// tcp_vit: paper 001 §7 — a standard pre-norm ViT (Std-ViT) against its c-product counterpart (TCP-ViT) with
// everything else held equal, on Fashion-MNIST (Debian's dataset-fashion-mnist, 28×28 grey images, 10 classes).
//
// Fashion-MNIST has one channel, so the c-product's third mode is made from the pixels themselves: the image is
// split by space-to-depth into its C = 4 pixel phases (row and column parity: four 14×14 images), and each phase
// image into 7×7 non-overlapping 2×2 patches. Token t is thus the 4×4 pixel block t of the image, held as a
// 4×C tensor (position within the 2×2 patch × phase). TCP-ViT projects each phase's 4 values to d_s = 16 by a
// t-linear layer and runs paper001_config (pre-norm, transform-domain t-LayerNorm, t-Softmax, GELU, no biases) on
// C = 4 slices under the DCT; Std-ViT sees the same 16 pixels as one vector, projects them to d = d_s·C = 64 and
// runs the standard layer (p = 1, identity transform, standard LayerNorm). Both: 4 layers, 4 heads, r_ff = 4,
// class token, learned positions, class-token pooling, a final LayerNorm and a linear head on the 64 features.
// The encoders differ by the c-product alone, whose projection weights are 1/C of the standard ones (eq. 6.9).
//
//   tcp_vit [--quick] [--data /usr/share/datasets/fashion-mnist] [--out DIR] [--summary FILE] [--epochs N]
//           [--train N] [--test N] [--lr X] [--batch N] [--device cpu|cuda]
// Full mode: 20,000 training images, all 10,000 test images, 3 epochs; quick: 3,000 / 1,000, 2 epochs.
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/training_report.hpp"
#include "tprod/io/idx.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/patchify.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

using namespace tprod;
using T = float;

constexpr std::size_t image_side = 28;
constexpr std::size_t channels = 4;        // C: the 2×2 pixel phases
constexpr std::size_t patch_grid = 7;      // 7×7 patches of 2×2 in each 14×14 phase image
constexpr std::size_t patches = patch_grid * patch_grid;
constexpr std::size_t patch_positions = 4;  // d = P² = 4 values per phase and patch
constexpr std::size_t patch_values = patch_positions * channels;

/// source[(t·4 + j)·C + k]: the image pixel at position j of patch t in phase k, from the library's
/// nn::space_to_depth (phase k = 2a + b holds pixels (2r + a, 2c + b)) and nn::patchify (position j = 2u + v of
/// patch (pr, pc) is phase pixel (2pr + u, 2pc + v)) applied once to the image of pixel indices.
std::array<std::uint16_t, patches * patch_values> patch_pixel_table() {
  tensor3<double> index_image(image_side, image_side, 1);
  for (std::size_t r = 0; r < image_side; ++r)
    for (std::size_t c = 0; c < image_side; ++c) index_image(r, c, 0) = double(r * image_side + c);
  const tensor3<double> x = nn::patchify(nn::space_to_depth(index_image, 2), 2);  // patches × positions × phases
  std::array<std::uint16_t, patches * patch_values> source{};
  for (std::size_t t = 0; t < patches; ++t)
    for (std::size_t j = 0; j < patch_positions; ++j)
      for (std::size_t k = 0; k < channels; ++k)
        source[(t * patch_positions + j) * channels + k] = std::uint16_t(x(t, j, k));
  return source;
}

/// Images as standardized floats in patch order (image e's value (t, j, k) at index e·196 + (t·4 + j)·C + k, as
/// patch_pixel_table lists them), with their labels.
struct image_set {
  std::vector<T> values;  // count × patches × patch_positions × channels
  std::vector<std::size_t> labels;
  std::size_t size() const { return labels.size(); }
};

/// The first `count` images of a split, pixels scaled to [0, 1] and then standardized by (mean, sd).
image_set prepare(const io::image_split& split, std::size_t count, double mean, double sd) {
  if (split.rows != image_side || split.cols != image_side)
    throw std::runtime_error("expected 28x28 Fashion-MNIST images, got " + std::to_string(split.rows) + "x" +
                             std::to_string(split.cols));
  static const auto source = patch_pixel_table();
  image_set s;
  s.values.resize(count * source.size());
  s.labels.resize(count);
  for (std::size_t e = 0; e < count; ++e) {
    const auto pixels = split.image(e);
    for (std::size_t i = 0; i < source.size(); ++i)
      s.values[e * source.size() + i] = T((pixels[source[i]] / 255.0 - mean) / sd);
    s.labels[e] = split.labels[e];
  }
  return s;
}

/// Mean and standard deviation of the [0, 1]-scaled pixels of the first `count` images (the training subset's
/// own statistics, applied to both splits).
std::pair<double, double> pixel_statistics(const io::image_split& split, std::size_t count) {
  double sum = 0, sum2 = 0;
  const std::size_t n = count * image_side * image_side;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = split.images[i] / 255.0;
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / double(n);
  return {mean, std::sqrt(std::max(sum2 / double(n) - mean * mean, 1e-12))};
}

/// The batch of images idx as the model's input, (B·49) × (16/p) × p, row b·49 + t: with p = C the 4 positions of
/// each phase in its own slice, with p = 1 the 16 values of a patch as one feature vector.
examples::example_batch<T> make_batch(const image_set& s, const std::vector<std::size_t>& idx, std::size_t slices) {
  const std::size_t features = patch_values / slices;
  examples::example_batch<T> b;
  b.input = tensor3<T>(idx.size() * patches, features, slices);
  b.info.size = idx.size();
  for (std::size_t n = 0; n < idx.size(); ++n) {
    const T* image = s.values.data() + idx[n] * patches * patch_values;
    for (std::size_t t = 0; t < patches; ++t)
      for (std::size_t f = 0; f < patch_values; ++f) {
        // f = j·C + k; slice p = C takes phase k and position j, p = 1 takes the flat index f.
        const std::size_t slice = slices == 1 ? 0 : f % channels, column = slices == 1 ? f : f / channels;
        b.input(n * patches + t, column, slice) = image[t * patch_values + f];
      }
    b.labels.push_back(s.labels[idx[n]]);
  }
  return b;
}

struct model_setup {
  std::string name;
  nn::vit_config config;
  std::string transform;
};

/// Std-ViT (p = 1, width d_s·C) or TCP-ViT (p = C, width d_s per slice), the same depth, heads and r_ff.
model_setup make_setup(bool tcp, std::size_t slice_width, std::uint64_t seed) {
  const std::size_t layers = 4, heads = 4, r_ff = 4;
  model_setup m;
  m.config.seed = seed;
  m.config.patches = patches;
  m.config.classes = 10;
  m.config.layers = layers;
  m.config.dropout = 0.0;  // a few epochs on 20k images: no overfitting to fight
  if (tcp) {
    m.name = "tcp-vit";
    m.transform = "dct";
    m.config.patch_features = patch_positions;
    m.config.layer = nn::paper001_config(slice_width, channels, heads, r_ff);
  } else {
    m.name = "std-vit";
    m.transform = "identity";
    m.config.patch_features = patch_values;
    m.config.layer = nn::paper001_config(slice_width * channels, 1, heads, r_ff);
    m.config.layer.norm = nn::layer_norm_kind::original_domain;  // p = 1: the standard LayerNorm
  }
  return m;
}

std::map<std::string, std::string> checkpoint_metadata(const model_setup& m, double mean, double sd) {
  const auto& c = m.config;
  return {{"model", m.name},
          {"transform", m.transform},
          {"patches", std::to_string(c.patches)},
          {"patch_features", std::to_string(c.patch_features)},
          {"classes", std::to_string(c.classes)},
          {"width", std::to_string(c.layer.width)},
          {"slices", std::to_string(c.layer.slices)},
          {"heads", std::to_string(c.layer.heads)},
          {"hidden", std::to_string(c.layer.hidden)},
          {"layers", std::to_string(c.layers)},
          {"pixel_mean", std::to_string(mean)},
          {"pixel_sd", std::to_string(sd)}};
}

/// Trains one model, saves its checkpoint and returns its summary line.
template <class L>
examples::model_summary run_model(const model_setup& m, const L& transform, const image_set& train,
                                  const image_set& test, const examples::fit_config& fit_cfg,
                                  examples::training_log& log, const std::filesystem::path& out, double mean,
                                  double sd, examples::device_kind device) {
  const std::size_t slices = m.config.layer.slices;
  auto s = examples::with_device(device, [&](auto space) {
    auto model = nn::make_vit_classifier<T>(m.config, transform, space);  // trains in the chosen memory space
    const auto make_train = [&](const std::vector<std::size_t>& idx) { return make_batch(train, idx, slices); };
    const auto make_test = [&](const std::vector<std::size_t>& idx) { return make_batch(test, idx, slices); };
    const auto r = examples::fit<T>(model, m.name, train.size(), make_train, test.size(), make_test, fit_cfg, log);
    nn::save_checkpoint<T>(out / "checkpoints" / (log.file_name(m.name) + ".safetensors"), model,
                           checkpoint_metadata(m, mean, sd));
    // The encoder as paper 001 counts it: the layers and the final LayerNorm.
    const std::size_t encoder =
        nn::parameters<T>(model.template get<4>()).count() + nn::parameters<T>(model.template get<6>()).count();
    return examples::summary_of(m.name, nn::parameters<T>(model).count(), encoder, r);
  });
  s.extra.update({{"slices", slices}, {"transform", m.transform}});
  return s;
}

std::size_t count_option(const examples::options& o, const std::string& key, std::size_t fallback, std::size_t most) {
  const double v = o.number(key, double(fallback));
  if (!(v >= 1 && v <= double(most) && v == std::floor(v)))
    throw std::invalid_argument("--" + key + " must be an integer from 1 to " + std::to_string(most));
  return std::size_t(v);
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt = examples::parse_options(
      argc, argv, "tcp_vit", "TCP-ViT (c-product over 4 pixel phases) against Std-ViT on Fashion-MNIST (paper 001 §7)",
      io::fashion_mnist_debian_dir,
      {{"train", "training images (default 20000, quick 3000)"},
       {"test", "test images (default 10000, quick 1000)"},
       {"lr", "peak learning rate of the one-cycle schedule (default 0.001; quick 0.003)"},
       {"batch", "batch size (default 64)"},
       examples::device_option()});
  try {
    const auto device = examples::device_choice(opt);
    examples::fit_config fit_cfg = examples::fit_defaults(opt);
    fit_cfg.epochs = opt.epochs.value_or(opt.quick ? 2 : 3);
    fit_cfg.batch_size = count_option(opt, "batch", 64, 4096);
    fit_cfg.lr = opt.number("lr", opt.quick ? 3e-3 : 1e-3);  // quick: few steps, so a higher peak
    if (!(fit_cfg.lr > 0 && fit_cfg.lr < 1)) throw std::invalid_argument("--lr must lie in (0, 1)");
    // The training accuracy on a fixed prefix of the training images keeps the evaluation cheap.
    fit_cfg.eval_train_limit = opt.quick ? 1000 : 5000;
    fit_cfg.progress_every = opt.quick ? 5 : 50;

    const auto train_split = io::read_fashion_mnist("train", opt.data);
    const auto test_split = io::read_fashion_mnist("test", opt.data);
    const std::size_t n_train = count_option(opt, "train", opt.quick ? 3000 : 20000, train_split.count);
    const std::size_t n_test = count_option(opt, "test", opt.quick ? 1000 : 10000, test_split.count);
    const auto [mean, sd] = pixel_statistics(train_split, n_train);
    const image_set train = prepare(train_split, n_train, mean, sd), test = prepare(test_split, n_test, mean, sd);
    std::printf("Fashion-MNIST: %zu training and %zu test images, pixel mean %.4f sd %.4f; %zu tokens of %zu pixels "
                "(%zu positions x C = %zu phases)\n",
                n_train, n_test, mean, sd, patches, patch_values, patch_positions, channels);
    std::fflush(stdout);

    std::filesystem::create_directories(opt.out / "checkpoints");
    examples::training_log log(opt.out / "tcp_vit.csv");
    const std::size_t slice_width = 16;
    const auto models = examples::over_seeds(opt, log, [&](std::uint64_t seed) {
      examples::fit_config run_cfg = fit_cfg;
      run_cfg.seed = seed;
      return std::vector{run_model(make_setup(false, slice_width, seed), identity_transform{}, train, test, run_cfg,
                                   log, opt.out, mean, sd, device),
                         run_model(make_setup(true, slice_width, seed), dct{}, train, test, run_cfg, log, opt.out,
                                   mean, sd, device)};
    });

    const auto &std_vit = models[0], &tcp_vit = models[1];
    const double ratio = double(tcp_vit.parameters) / double(std_vit.parameters);
    const double encoder_ratio = double(tcp_vit.encoder_parameters) / double(std_vit.encoder_parameters);
    const double gap = 100 * (tcp_vit.test_accuracy - std_vit.test_accuracy);
    std::printf("\n%-8s %10s %10s %10s %10s %8s\n", "model", "params", "encoder", "train acc", "test acc", "s/epoch");
    for (const auto& m : models)
      std::printf("%-8s %10zu %10zu %9.2f%% %9.2f%% %8.1f\n", m.name.c_str(), m.parameters, m.encoder_parameters,
                  100 * m.train_accuracy, 100 * m.test_accuracy, m.seconds_per_epoch);
    std::printf("parameter ratio TCP/Std %.3f (encoder %.3f; paper's 1/C = %.3f); test accuracy difference %+.2f "
                "points\n",
                ratio, encoder_ratio, 1.0 / double(channels), gap);

    examples::plot_training_curves(log, opt.out / "tcp_vit.png", "TCP-ViT vs Std-ViT, Fashion-MNIST");
    if (opt.summary)
      examples::write_summary(*opt.summary, "tcp_vit", examples::majority_rate(test.labels), models,
                              {{"train_images", n_train},
                               {"test_images", n_test},
                               {"epochs", fit_cfg.epochs},
                               {"first_seed", opt.seed},
                               {"seeds", opt.seeds},
                               {"channels", channels},
                               {"parameter_ratio", ratio},
                               {"encoder_parameter_ratio", encoder_ratio},
                               {"one_over_c", 1.0 / double(channels)},
                               {"test_accuracy_difference_points", gap},
                               {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp_vit: %s\n", e.what());
    return 1;
  }
  return 0;
}
