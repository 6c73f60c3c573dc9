// SPDX-License-Identifier: Apache-2.0
// multilinear_attention: paper 003 — the Tensorized Transformer's multi-linear attention (block-term attention with
// shared Q, K, V projections, eq. 2) and TensorCoder's dimension-wise attention, each in place of the standard
// multi-head attention of the same text classifier.
//
// Data: a text corpus in the folder-per-class layout ROOT/{train,test}/<label>/*.txt — the SpamAssassin corpus
// (ham / spam) built by scripts/make-text-corpus.sh; words tokenized by io::vocabulary (the 20,000 most frequent
// training words), every document truncated or padded to --max-length tokens (N, the multi-linear layer's length).
// Model: nn::make_text_classifier — token embedding, sinusoidal positions, dropout, N post-norm encoder layers
// (GELU FFN), mean pooling over the valid tokens, linear head; p = 1, identity transform. The three models share
// everything but the attention: "standard" (H heads), "multilinear" (P block terms of rank R, superdiagonal or full
// cores, W_O with N² rows) and "dimension-wise" (H heads attending over their d/H features).
// Training: AdamW + one-cycle + gradient clipping (nn::fit, tprod/nn/model/fit.hpp), every model from --seeds seeds
// (default 3, quick 1), reported as mean ± sd.
//
//   multilinear_attention --data build/data/spam-assassin
//   multilinear_attention --data build/data/spam-assassin --models multilinear --core full --rank 8
//
// Writes into --out: training_log.csv, training_curves.png, checkpoints/<model>.safetensors.
#include "tprod/nn/multilinear_attention.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/text_data.hpp"
#include "support/training_report.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "multilinear_attention";
using examples::encoded_split;

struct run_setup {
  nn::text_classifier_config base;
  std::size_t length = 0, rank = 0, terms = 0;  ///< N, R, P of the multi-linear attention
  nn::multilinear_core core = nn::multilinear_core::superdiagonal;
  examples::fit_config fit;
  std::filesystem::path checkpoints;
  std::map<std::string, std::string> metadata;
};

/// @brief Trains, checkpoints and summarizes one text classifier.
template <class Model>
examples::model_summary train_model(const std::string& name, Model model, const run_setup& setup,
                                    const encoded_split& train, const encoded_split& test, examples::training_log& log,
                                    std::map<std::string, std::string> meta) {
  const auto make_train = [&](const std::vector<std::size_t>& idx) { return train.batch(idx); };
  const auto make_test = [&](const std::vector<std::size_t>& idx) { return test.batch(idx); };
  const auto r = examples::fit<float>(model, name, train.size(), make_train, test.size(), make_test, setup.fit, log);
  meta.insert(setup.metadata.begin(), setup.metadata.end());
  nn::save_checkpoint<float>(setup.checkpoints / (log.file_name(name) + ".safetensors"), model, meta);
  return examples::summary_of(name, nn::parameters<float>(model).count(),
                              nn::parameters<float>(model.template get<3>()).count(), r);
}

/// @brief Builds the model `name` (standard, dimension-wise or multilinear: the same classifier with another
/// attention in every encoder layer) and trains it.
examples::model_summary train_named(const std::string& name, const run_setup& setup, const encoded_split& train,
                                    const encoded_split& test, examples::training_log& log) {
  const auto& c = setup.base;
  nn::layer_config cfg = nn::paper000_config(c.width, c.heads, c.hidden, 1, c.act);
  auto meta = nn::to_metadata(c);
  meta["attention"] = name;
  if (name == "standard")
    return train_model(name, nn::make_text_classifier<float>(c, identity_transform{}), setup, train, test, log, meta);
  if (name == "dimension-wise") {
    cfg.attention = nn::attention_variant::dimension_wise;
    return train_model(name,
                       nn::make_text_classifier<float>(
                           c, nn::make_encoder_layers<float>(cfg, c.layers, identity_transform{}, c.seed + 100)),
                       setup, train, test, log, meta);
  }
  // multilinear: the encoder layers are built around the attention, with the same FFN, LayerNorm and seeds
  using attention = nn::multilinear_attention_params<float, identity_transform>;
  std::vector<nn::encoder_params<float, identity_transform, attention>> layers;
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::uint64_t seed = c.seed + 100 + 1000 * i;
    layers.push_back(nn::make_encoder_params_with<float>(
        cfg, identity_transform{}, seed,
        nn::make_multilinear_attention_params<float>(c.width, setup.length, setup.rank, setup.terms, 1,
                                                     identity_transform{}, seed, setup.core)));
  }
  meta["rank"] = std::to_string(setup.rank);
  meta["terms"] = std::to_string(setup.terms);
  meta["core"] = setup.core == nn::multilinear_core::full ? "full" : "superdiagonal";
  auto s = train_model(name, nn::make_text_classifier<float>(c, std::move(layers)), setup, train, test, log, meta);
  s.extra["rank"] = setup.rank;
  s.extra["terms"] = setup.terms;
  s.extra["core"] = meta["core"];
  return s;
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 003: multi-linear (block-term) attention and dimension-wise attention against standard multi-head "
      "attention in the same text classifier.",
      "build/data/spam-assassin",
      {{"models", "LIST  comma-separated: standard, multilinear, dimension-wise (default all three)"},
       {"width", "D     model width d (default 64; quick 32)"},
       {"heads", "H     heads of the standard and dimension-wise attention (default 4)"},
       {"hidden", "F    FFN width d_ff (default 2d)"},
       {"layers", "N    encoder layers (default 2; quick 1)"},
       {"max-length", "T  tokens per document, the multi-linear layer's N (default 64; quick 32)"},
       {"rank", "R      rank of the multi-linear factors Q', K', V' (default d/H)"},
       {"terms", "P     block terms of the multi-linear attention (default H)"},
       {"core", "C      multi-linear cores: superdiagonal (default, the paper's) or full"},
       {"batch", "B     batch size (default 32)"},
       {"lr", "R        peak learning rate (default 1e-3; quick 3e-3)"},
       {"train-docs", "N  use at most N training documents (default all; quick 3000)"},
       {"test-docs", "N   use at most N test documents (default all; quick 600)"}});

  const bool quick = o.quick;
  run_setup setup;
  auto& base = setup.base;
  base.width = o.count("width", quick ? 32 : 64);
  base.heads = o.count("heads", 4);
  base.hidden = o.count("hidden", 2.0 * double(base.width));
  base.layers = o.count("layers", quick ? 1 : 2);
  base.act = nn::activation::gelu;
  base.dropout = 0.1;
  nn::paper000_config(base.width, base.heads, base.hidden, 1);  // fail early on a bad shape
  setup.length = o.count("max-length", quick ? 32 : 64);
  setup.rank = o.count("rank", double(std::max<std::size_t>(1, base.width / base.heads)));
  setup.terms = o.count("terms", double(base.heads));
  const std::string core = o.extra.count("core") ? o.extra.at("core") : "superdiagonal";
  if (core != "superdiagonal" && core != "full")
    throw std::invalid_argument("--core: '" + core + "' is neither superdiagonal nor full");
  setup.core = core == "full" ? nn::multilinear_core::full : nn::multilinear_core::superdiagonal;
  auto& fc = setup.fit;
  fc = examples::fit_defaults(o);
  fc.epochs = o.epochs.value_or(3);
  fc.batch_size = o.count("batch", 32);
  fc.lr = o.number("lr", quick ? 3e-3 : 1e-3);  // quick: few steps, so a higher peak
  if (!(fc.lr > 0)) throw std::invalid_argument("--lr must be positive");
  fc.eval_train_limit = 1000;
  std::vector<std::string> models;
  std::stringstream list(o.extra.count("models") ? o.extra.at("models") : "standard,multilinear,dimension-wise");
  for (std::string m; std::getline(list, m, ',');) {
    if (m != "standard" && m != "multilinear" && m != "dimension-wise")
      throw std::invalid_argument("--models: unknown model '" + m + "' (standard, multilinear, dimension-wise)");
    models.push_back(m);
  }
  if (models.empty()) throw std::invalid_argument("--models: no model named");
  std::printf(
      "%s: d = %zu, H = %zu, d_ff = %zu, %zu layers, N = %zu, R = %zu, P = %zu (%s cores), batch %zu, peak "
      "lr %.1e, %zu epochs, %zu threads\n",
      example_name, base.width, base.heads, base.hidden, base.layers, setup.length, setup.rank, setup.terms,
      core.c_str(), fc.batch_size, fc.lr, fc.epochs, num_threads());

  const auto data = examples::load_text_dataset(o, setup.length, 3000, 600);
  const auto& [vocab, train, test, classes, labels] = data;
  base.vocabulary = vocab.size();
  base.classes = classes;
  std::printf("%zu training and %zu test documents, vocabulary %zu\n", train.size(), test.size(), vocab.size());

  setup.checkpoints = o.out / "checkpoints";
  setup.metadata = {{"example", example_name}, {"max_length", std::to_string(setup.length)}, {"labels", labels}};
  std::filesystem::create_directories(setup.checkpoints);
  examples::training_log log(o.out / "training_log.csv");
  auto summaries = examples::over_seeds(o, log, [&](std::uint64_t seed) {
    run_setup run = setup;
    run.base.seed = run.fit.seed = seed;
    std::vector<examples::model_summary> trained;
    for (const auto& m : models) trained.push_back(train_named(m, run, train, test, log));
    return trained;
  });
  examples::plot_training_curves(log, o.out / "training_curves.png",
                                 "paper 003 on " + o.data.filename().string() + ": attention variants");

  std::printf("\n%-15s %10s %10s %10s %8s %8s %10s\n", "model", "params", "encoder", "attention", "train", "test",
              "s/epoch");
  const std::size_t d = base.width;
  for (auto& s : summaries) {
    const std::size_t attention =
        base.layers * (s.name == "multilinear" ? nn::multilinear_attention_parameter_count(
                                                     d, setup.length, setup.rank, setup.terms, setup.core, true)
                                               : nn::multihead_attention_parameter_count(d, true));
    s.extra["attention_parameters"] = attention;
    std::printf("%-15s %10zu %10zu %10zu %7.2f%% %7.2f%% %10.1f\n", s.name.c_str(), s.parameters, s.encoder_parameters,
                attention, 100 * s.train_accuracy, 100 * s.test_accuracy, s.seconds_per_epoch);
  }
  if (o.summary) {
    const nlohmann::json extra = {{"data", o.data.string()},
                                  {"train_documents", train.size()},
                                  {"test_documents", test.size()},
                                  {"width", d},
                                  {"heads", base.heads},
                                  {"hidden", base.hidden},
                                  {"layers", base.layers},
                                  {"max_length", setup.length},
                                  {"rank", setup.rank},
                                  {"terms", setup.terms},
                                  {"core", core},
                                  {"epochs", fc.epochs},
                                  {"batch", fc.batch_size},
                                  {"lr", fc.lr},
                                  {"first_seed", o.seed},
                                  {"seeds", o.seeds},
                                  {"threads", num_threads()}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test.labels), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
