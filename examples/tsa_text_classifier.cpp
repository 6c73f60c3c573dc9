// SPDX-License-Identifier: Apache-2.0
// tsa_text_classifier: paper 002's comparison (§6, Table 1 and Fig. 3) of tensorized spectral attention (TSA,
// Algorithm 1: QTT/MPO key and value weights, Θ = ReLU(KKᵀ/d_k) without its diagonal, Ψ = Ω ⊙ Θ on the
// bidirectional time graph Ω, Y = (I + Ψ) ×₁ V) against dot-product attention (DPA) and additive (Bahdanau-style)
// attention (ADA) in the same sequence classifier, at about 300 trainable attention parameters and at larger
// embedding widths.
//
// Data: a text corpus in the folder-per-class layout (ROOT/{train,test}/<label>/*.txt; the SpamAssassin ham/spam
// corpus built by scripts/make-text-corpus.sh), as in the paper: sequences of 200 tokens over the 20,000 most
// frequent words of the training split.
// Model (one per attention): token embedding (d) → sinusoidal positions → one attention layer with H = 2 heads
// (TSA: QTT cores of rank 2 and an MPO projection; DPA: standard multi-head attention with biases; ADA: additive
// scores v_hᵀ tanh(Q_i + K_j), nn::additive_attention_layer) → mean pooling over the valid tokens → dropout 0.1 →
// the paper's head: a 20-unit ReLU layer → dropout 0.1 → linear softmax layer (§6: seven layers). Only the attention
// layer differs between models of the same width d (nn::make_attention_classifier).
//
// Every model trains on the CPU or the GPU (--device cpu|cuda; the GPU by default where there is one).
//
// Command: tsa_text_classifier --data build/data/spam-assassin [--quick] [--out DIR] [--summary FILE]
//          [--device cpu|cuda]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/text_data.hpp"
#include "support/training_report.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/additive_attention_layer.hpp"
#include "tprod/nn/model/attention_layer.hpp"
#include "tprod/nn/model/spectral_attention_layer.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

using namespace tprod;
using real = float;
constexpr std::size_t heads = 2;  // paper 002, §6: multi-head attention with H = 2

/// One model of the comparison: its attention and embedding width d.
struct model_spec {
  std::string attention;  ///< "tsa", "dpa" or "ada"
  std::size_t width;
  std::string name() const { return attention + "-" + std::to_string(width); }
};

/// A comma-separated list of widths ("32,128"). @throws std::invalid_argument naming the option.
std::vector<std::size_t> parse_widths(const examples::options& opt, const std::string& key,
                                      std::vector<std::size_t> fallback) {
  const auto it = opt.extra.find(key);
  if (it == opt.extra.end()) return fallback;
  std::vector<std::size_t> widths;
  std::size_t begin = 0;
  while (begin <= it->second.size()) {
    const std::size_t end = std::min(it->second.find(',', begin), it->second.size());
    const std::string item = it->second.substr(begin, end - begin);
    char* stop = nullptr;
    const long long w = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || w <= 0)
      throw std::invalid_argument("--" + key + " expects positive widths separated by commas, got '" + it->second +
                                  "'");
    widths.push_back(std::size_t(w));
    begin = end + 1;
  }
  return widths;
}

constexpr std::size_t hidden_units = 20;  // paper 002, §6: the dense layer of 20 ReLU units before the output

struct run_context {
  const examples::encoded_split &train, &test;
  std::size_t length, vocabulary, classes;
  double damping;
  examples::fit_config fit;
  examples::training_log& log;
  std::filesystem::path checkpoints;
};

/// Trains one model from `seed` (the classifier's initialisation and dropout from 10 + seed, the batch order from
/// seed) and saves its checkpoint; returns its summary line.
template <class Attention>
examples::model_summary train_one(const model_spec& spec, Attention attention, const run_context& ctx,
                                  std::uint64_t seed) {
  const std::size_t attention_parameters = nn::parameters<real>(attention).count();
  auto model = nn::make_attention_classifier<real>(
      std::move(attention), {ctx.vocabulary, spec.width, hidden_units, ctx.classes, 0.1, 0.5, 10 + seed});
  examples::fit_config fit = ctx.fit;
  fit.seed = seed;
  const auto make = [](const examples::encoded_split& split) {
    return [&split](const std::vector<std::size_t>& idx) { return split.batch(idx); };
  };
  std::printf("\n== %s: %zu attention parameters (d = %zu, H = %zu)\n", spec.name().c_str(), attention_parameters,
              spec.width, heads);
  const auto r = examples::fit<real>(model, spec.name(), ctx.train.size(), make(ctx.train), ctx.test.size(),
                                     make(ctx.test), fit, ctx.log);
  nn::save_checkpoint<real>(ctx.checkpoints / (ctx.log.file_name(spec.name()) + ".safetensors"), model,
                            {{"example", "tsa_text_classifier"},
                             {"attention", spec.attention},
                             {"width", std::to_string(spec.width)},
                             {"heads", std::to_string(heads)},
                             {"length", std::to_string(ctx.length)},
                             {"damping", std::to_string(ctx.damping)},
                             {"vocabulary", std::to_string(ctx.vocabulary)},
                             {"classes", std::to_string(ctx.classes)}});
  auto s = examples::summary_of(spec.name(), nn::parameters<real>(model).count(), attention_parameters, r);
  s.extra.update({{"attention", spec.attention}, {"width", spec.width}});
  return s;
}

int run(int argc, char** argv) {
  const auto opt = examples::parse_options(
      argc, argv, "tsa_text_classifier",
      "Tensorized spectral attention (paper 002) against dot-product and additive attention in a sequence "
      "classifier.",
      "build/data/spam-assassin",
      {{"length", "tokens per sequence (default 200; quick 64)"},
       {"damping", "c of the time graph, omega = c^|l2-l1|/2 (default 0.9)"},
       {"lr", "peak learning rate of the one-cycle schedule (default 0.003; quick 0.01)"},
       {"tsa-widths", "embedding widths of the TSA models, powers of two >= 4 (default 32,64; quick 16)"},
       {"dpa-widths", "embedding widths of the dot-product models, even (default 8,32,64; quick 8)"},
       {"ada-widths", "embedding widths of the additive-attention models, even (default 8,32,64; quick 8)"},
       examples::device_option()});
  const double length_option = opt.number("length", opt.quick ? 64 : 200);
  const double damping = opt.number("damping", 0.9);
  if (length_option < 2 || length_option != std::floor(length_option))
    throw std::invalid_argument("--length must be a whole number of at least 2");
  const auto length = std::size_t(length_option);
  if (!(damping > 0 && damping < 1)) throw std::invalid_argument("--damping must lie in (0, 1)");

  // ≈300 attention parameters: TSA at d = 32 (QTT, 332) against DPA at d = 8 (288); then both at the same widths.
  using widths = std::vector<std::size_t>;
  std::vector<model_spec> specs;
  for (std::size_t w : parse_widths(opt, "tsa-widths", opt.quick ? widths{16} : widths{32, 64})) {
    if (w < 4 || (w & (w - 1)) != 0)
      throw std::invalid_argument("--tsa-widths: " + std::to_string(w) + " is not a power of two of at least 4 (QTT)");
    specs.push_back({"tsa", w});
  }
  for (const char* kind : {"dpa", "ada"})
    for (std::size_t w : parse_widths(opt, std::string(kind) + "-widths", opt.quick ? widths{8} : widths{8, 32, 64})) {
      if (w % heads != 0)
        throw std::invalid_argument("--" + std::string(kind) + "-widths: " + std::to_string(w) +
                                    " is not divisible by the " + std::to_string(heads) + " heads");
      specs.push_back({kind, w});
    }
  if (specs.empty()) throw std::invalid_argument("no models to train");
  const auto device = examples::device_choice(opt);

  const io::text_corpus corpus = io::read_text_corpus(opt.data);
  // A fixed random order (the splits are grouped by label, and the training accuracy is measured on the first
  // documents), cut to a subset in quick mode.
  const auto train_docs = examples::pick_documents(corpus.train, opt.quick ? 600 : 0, 1);
  const auto test_docs = examples::pick_documents(corpus.test, opt.quick ? 300 : 0, 2);
  std::vector<std::string> texts;
  for (const auto* d : train_docs) texts.push_back(d->text);
  const auto vocab = io::vocabulary::build(texts, 20000);
  const auto train = examples::encode_documents(train_docs, vocab, length);
  const auto test = examples::encode_documents(test_docs, vocab, length);
  std::printf("%s: %zu training and %zu test documents, %zu labels, %zu ids in the vocabulary, %zu tokens each\n",
              opt.data.string().c_str(), train.size(), test.size(), corpus.labels().size(), vocab.size(), length);

  examples::fit_config fit = examples::fit_defaults(opt);
  fit.epochs = opt.epochs.value_or(opt.quick ? 4 : 3);
  fit.lr = opt.number("lr", opt.quick ? 1e-2 : 3e-3);  // quick: few steps, so a higher peak
  fit.progress_every = opt.quick ? 5 : 40;
  fit.eval_train_limit = 2000;  // the training accuracy on 2000 random training documents: evaluation is a third of
                                // the run's time
  examples::training_log log(opt.out / "training_log.csv");
  const run_context ctx{train, test, length, vocab.size(), corpus.labels().size(), damping, fit, log,
                        opt.out / "checkpoints"};
  std::filesystem::create_directories(ctx.checkpoints);
  vocab.save(ctx.checkpoints / "vocabulary.txt");

  const auto results = examples::over_seeds(opt, log, [&](std::uint64_t seed) {
    std::vector<examples::model_summary> models;
    for (const auto& spec : specs) {
      const std::uint64_t attention_seed = 99 + seed + spec.width;
      models.push_back(examples::with_device(device, [&](auto space) {  // drawn on the host, moved once
        using S = decltype(space);
        if (spec.attention == "tsa")
          return train_one(spec,
                           nn::spectral_attention_layer<real, S>(
                               nn::make_qtt_tsa_params<real>(spec.width, heads, 0, attention_seed), damping),
                           ctx, seed);
        if (spec.attention == "dpa")
          return train_one(spec,
                           nn::attention_layer<real, identity_transform, nn::attention_params<real, identity_transform, S>>(
                               nn::to_space<S>(nn::make_attention_params<real>(spec.width, heads, 1,
                                                                               identity_transform{}, attention_seed))),
                           ctx, seed);
        return train_one(spec,
                         nn::additive_attention_layer<real, S>(nn::to_space<S>(
                             nn::make_additive_attention_params<real>(spec.width, heads, attention_seed))),
                         ctx, seed);
      }));
    }
    return models;
  });

  std::printf("\n%-10s %12s %12s %10s %10s %10s\n", "model", "attention", "parameters", "train acc", "test acc",
              "s/epoch");
  for (const auto& r : results)
    std::printf("%-10s %12zu %12zu %9.2f%% %9.2f%% %10.1f\n", r.name.c_str(), r.encoder_parameters, r.parameters,
                100 * r.train_accuracy, 100 * r.test_accuracy, r.seconds_per_epoch);
  examples::plot_training_curves(log, opt.out / "tsa_text_classifier.png",
                                 "TSA vs dot-product and additive attention, " + std::to_string(length) + " tokens");
  if (opt.summary)
    examples::write_summary(*opt.summary, "tsa_text_classifier", examples::majority_rate(test.labels), results,
                            {{"length", length},
                             {"damping", damping},
                             {"heads", heads},
                             {"epochs", fit.epochs},
                             {"first_seed", opt.seed},
                             {"seeds", opt.seeds},
                             {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}});
  std::printf("log %s, checkpoints in %s\n", log.file().c_str(), ctx.checkpoints.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example("tsa_text_classifier", argc, argv, run); }
