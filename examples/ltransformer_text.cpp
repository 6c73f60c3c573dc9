// SPDX-License-Identifier: Apache-2.0
// ltransformer_text: paper 000 §6 — text classification with the standard Transformer encoder ("Std") against the
// L-product encoder with p = 4 slices under the DCT ("T4"), the slice-aware positional encoding's α strategies, and
// the parameter-matched single-layer standard encoder ("Std-1L", §6.2).
//
// Data: a text corpus in the folder-per-class layout ROOT/{train,test}/<label>/*.txt — the SpamAssassin corpus
// (ham / spam) built by scripts/make-text-corpus.sh. Words are tokenized by io::vocabulary (the 20,000 most frequent
// training words), every document is truncated or padded to --max-length tokens.
// Model: nn::make_text_classifier — token embedding, sinusoidal positions (α per slice), dropout, N post-norm
// encoder layers (GELU), mean pooling over the valid tokens, linear head; paper 000's IMDB shape d = 128, H = 4,
// d_ff = 512, 4 layers, T = 128 by default. Std and T4 share the embedding and the head: only the encoder differs.
// Training: AdamW + one-cycle + gradient clipping (nn::fit, tprod/nn/model/fit.hpp), every model from --seeds seeds
// (default 3, quick 1), reported as mean ± sd.
// "t4-learned-z" is T4 with a learned orthogonal transform Z = Q(S)·DCT (nn::learned_transform) instead of the DCT;
// "t4-tln" is T4 with paper 001's transform-domain LayerNorm (Def. 5.5), whose slices stay apart in every layer.
//
// Built with MPI (TPROD_ENABLE_MPI), the same program is also ltransformer_text_mpi, which trains over the ranks of
// mpirun: --parallel spectral gives each rank a block of the encoder's slices (t4-tln only; model parallel,
// tprod/distributed/model_parallel.hpp), --parallel data each rank a block of every batch (any model). Rank 0 prints
// and writes the files; the result equals one process's with the same seed up to float rounding.
//
//   ltransformer_text --data build/data/spam-assassin                 # Std, T4 (linear α), Std-1L
//   ltransformer_text --data build/data/spam-assassin --models all    # and T4 with every other α strategy
//   ltransformer_text --throughput 20                                 # Std's training examples/s, random tokens
//   ltransformer_text --device cuda ...                               # on the GPU (the default where there is one)
//   mpirun -np 2 ltransformer_text_mpi --models t4-tln --parallel spectral   # the encoder's slices over 2 ranks
//
// Writes into --out: training_log.csv, training_curves.png, vocabulary.txt and checkpoints/<model>.safetensors
// (metadata: the model config, "transform", "max_length", "labels"; <model>-seed<S> beyond the first seed), which
// the tensorllm_denoise example reads.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
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
#include "tprod/nn/learned_transform.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"
#ifdef TPROD_EXAMPLE_MPI
#include <mpi.h>

#include "tprod/distributed/model_parallel.hpp"
#endif

namespace {

using namespace tprod;
constexpr const char* example_name = "ltransformer_text";

using examples::encoded_split;

/// @brief `count` documents of uniformly random word ids and labels, every position valid (throughput runs).
encoded_split random_split(std::size_t count, std::size_t length, std::size_t vocabulary, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> word(2, vocabulary - 1), label(0, 1);
  encoded_split s;
  s.length = length;
  s.tokens.resize(count * length);
  for (auto& t : s.tokens) t = word(rng);
  s.lengths.assign(count, length);
  for (std::size_t i = 0; i < count; ++i) s.labels.push_back(label(rng));
  return s;
}

/// @brief One model of the comparison: its name (also the checkpoint's file name) and how it differs from Std.
struct variant {
  std::string name;
  std::size_t slices = 1;  ///< 1: standard encoder under the identity; 4: T4 under the DCT
  std::size_t layers = 0;  ///< 0: the configured depth
  nn::alpha_strategy positions = nn::alpha_strategy::standard;
  bool learnable_positions = false;
  bool learned_transform = false;  ///< T4 with Z learned from the DCT (nn::learned_transform)
  bool transform_norm = false;     ///< T4 with the transform-domain LayerNorm (slice-separable layers)
};

/// @brief The models named in a comma-separated list: std, t4 (the main α strategy), std-1l, t4-<strategy>,
/// t4-learnable, t4-learned-z, t4-tln; "all" is std, t4, std-1l and T4 with every other strategy, with learnable α,
/// with a learned transform and with the transform-domain LayerNorm.
std::vector<variant> parse_models(const std::string& list, nn::alpha_strategy main_pe) {
  const std::vector<nn::alpha_strategy> strategies = {nn::alpha_strategy::standard, nn::alpha_strategy::linear,
                                                      nn::alpha_strategy::exponential, nn::alpha_strategy::harmonic};
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string n; std::getline(in, n, ',');) {
    if (n != "all") {
      names.push_back(n);
      continue;
    }
    names.insert(names.end(), {"std", "t4", "std-1l"});
    for (auto s : strategies)
      if (s != main_pe) names.push_back("t4-" + std::string(nn::name(s)));
    names.insert(names.end(), {"t4-learnable", "t4-learned-z", "t4-tln"});
  }
  std::vector<variant> out;
  for (const auto& n : names) {
    variant v{n};
    if (n == "std") {
    } else if (n == "std-1l") {
      v.layers = 1;  // paper 000 §6.2: one standard layer at full width ≈ the encoder budget of T4
    } else if (n == "t4" || n == "t4-learnable" || n == "t4-learned-z" || n == "t4-tln") {
      v.slices = 4;
      v.positions = main_pe;  // learnable α starts from the main strategy
      v.learnable_positions = n == "t4-learnable";
      v.learned_transform = n == "t4-learned-z";
      v.transform_norm = n == "t4-tln";
    } else if (n.rfind("t4-", 0) == 0) {
      v.slices = 4;
      v.positions = nn::alpha_strategy_from(n.substr(3));
    } else {
      throw std::invalid_argument("--models: unknown model '" + n +
                                  "' (std, t4, std-1l, t4-standard, t4-linear, t4-exponential, t4-harmonic, "
                                  "t4-learnable, t4-learned-z, t4-tln, all)");
    }
    if (std::none_of(out.begin(), out.end(), [&](const variant& o) { return o.name == n; })) out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("--models: no model named");
  return out;
}

/// How the ranks of an MPI run share the training (ltransformer_text_mpi's --parallel).
enum class parallel_kind { none, data, spectral };

struct run_setup {
  nn::text_classifier_config base;  ///< Std's config; a variant changes slices, layers and positions
  examples::fit_config fit;
  std::filesystem::path checkpoints;            ///< empty: no checkpoints
  std::map<std::string, std::string> metadata;  ///< added to every checkpoint
  examples::device_kind device = examples::device_kind::cpu;
  parallel_kind parallel = parallel_kind::none;
  bool root = true;  ///< the rank that prints and writes (the only one without MPI)
};

/// @brief Whether L is a learned transform of another memory space than Space (train_variant below picks the
/// model's; the branch that would pair them is never taken, but must compile).
template <class L, class Space>
constexpr bool trains_elsewhere() {
  if constexpr (requires { typename L::memory_space_type; })
    return !std::same_as<typename L::memory_space_type, Space>;
  else
    return false;
}

/// @brief Builds, trains, checkpoints and summarizes one variant under transform L.
template <class L>
examples::model_summary train_variant(const variant& v, const L& transform, const char* transform_name,
                                      const run_setup& setup, const encoded_split& train, const encoded_split& test,
                                      examples::training_log& log) {
  nn::text_classifier_config cfg = setup.base;
  cfg.slices = v.slices;
  if (v.layers) cfg.layers = v.layers;
  cfg.positions = v.positions;
  cfg.learnable_positions = v.learnable_positions;
  auto layer = nn::paper000_config(cfg.width, cfg.heads, cfg.hidden, cfg.slices, cfg.act);
  if (v.transform_norm) layer.norm = nn::layer_norm_kind::transform_domain;
  // Trains a built model and checkpoints it (`whole`: the model is all on this rank, so its file is the model's).
  const auto train_model = [&](auto& model, bool whole) {
    const auto make_train = [&](const std::vector<std::size_t>& idx) { return train.batch(idx); };
    const auto make_test = [&](const std::vector<std::size_t>& idx) { return test.batch(idx); };
    const auto r =
        examples::fit<float>(model, v.name, train.size(), make_train, test.size(), make_test, setup.fit, log);

    auto meta = nn::to_metadata(cfg);
    meta.insert(setup.metadata.begin(), setup.metadata.end());
    meta["transform"] = transform_name;
    if (!setup.checkpoints.empty() && whole)
      nn::save_checkpoint<float>(setup.checkpoints / (log.file_name(v.name) + ".safetensors"), model, meta);

    // The encoder's parameters without a learned transform's S (counted apart, like the learnable α).
    std::size_t encoder =
        examples::parameter_count(model, "encoder.") - examples::parameter_count(model, "encoder.transform.");
    std::size_t total = examples::parameter_count(model) - encoder;
    auto summary = examples::summary_of(v.name, total + encoder, encoder, r);
#ifdef TPROD_EXAMPLE_MPI
    if (!whole) MPI_Allreduce(MPI_IN_PLACE, &encoder, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);  // every slice
    summary = examples::summary_of(v.name, total + encoder, encoder, r);
    if constexpr (requires { model.template get<3>().values_communicated(); }) {
      // What the spectral encoder summed over the ranks, per training example (evaluations included).
      const double bytes = double(model.template get<3>().values_communicated() * sizeof(float));
      summary.extra["encoder_bytes_summed"] = bytes;
      std::printf(
          "%s: the encoder summed %.1f MB of activations over the ranks (its output in every forward pass, "
          "its input's gradient in every backward pass)\n",
          v.name.c_str(), bytes / 1e6);
    }
#endif
    return summary;
  };
  // The model in the chosen memory space: it trains there, and its checkpoint is the same file from either.
  auto s = examples::with_device(setup.device, [&](auto space) -> examples::model_summary {
    if constexpr (trains_elsewhere<L, decltype(space)>()) {
      throw std::logic_error(v.name + ": the learned transform lives in another memory space than the model");
    } else {
      auto layers = nn::make_encoder_layers<float>(layer, cfg.layers, transform, cfg.seed + 100);
#ifdef TPROD_EXAMPLE_MPI
      if constexpr (std::same_as<decltype(space), host_space> && !nn::trained_transform<L, float>) {
        if (setup.parallel == parallel_kind::spectral) {
          auto model = distributed::make_spectral_text_classifier<float>(MPI_COMM_WORLD, cfg, std::move(layers));
          return train_model(model, false);
        }
      }
#endif
      auto model = nn::make_text_classifier<float>(cfg, std::move(layers), space);
      return train_model(model, true);
    }
  });
  s.extra.update({{"slices", cfg.slices},
                  {"layers", cfg.layers},
                  {"positions", v.learnable_positions ? "learnable" : std::string(nn::name(cfg.positions))},
                  {"transform", transform_name}});
  if constexpr (requires { transform.base_matrix(); }) {
    // How far training moved Z from the DCT: ‖Z − Z₀‖_F, and the largest change of an entry.
    const Eigen::MatrixXd moved = transform.matrix() - transform.base_matrix();
    s.extra["z_distance_from_dct"] = moved.norm();
    s.extra["z_max_entry_change"] = moved.cwiseAbs().maxCoeff();
    std::printf("%s: ||Z - DCT||_F = %.4f, largest entry change %.4f\n", v.name.c_str(), moved.norm(),
                moved.cwiseAbs().maxCoeff());
  }
  return s;
}

examples::model_summary train_variant(const variant& v, const run_setup& setup, const encoded_split& train,
                                      const encoded_split& test, examples::training_log& log) {
  if (v.slices == 1) return train_variant(v, identity_transform{}, "identity", setup, train, test, log);
  if (v.learned_transform) {  // Z's parameter trains where the model does
#if TPROD_HAS_CUDA
    if (setup.device == examples::device_kind::cuda)
      return train_variant(v, nn::learned_transform<float, device_space>(v.slices), "learned-dct", setup, train, test,
                           log);
#endif
    return train_variant(v, nn::learned_transform<float>(v.slices), "learned-dct", setup, train, test, log);
  }
  return train_variant(v, dct{}, "dct", setup, train, test, log);
}

int run(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> own = {
      {"models",
       "LIST  comma-separated: std, t4, std-1l, t4-<standard|linear|exponential|harmonic|learnable>, "
       "t4-learned-z, t4-tln, all (default std,t4,std-1l)"},
      {"pe", "S     T4's α strategy: standard, linear (default), exponential, harmonic"},
      {"width", "D     model width d (default 128; quick 64)"},
      {"heads", "H     attention heads (default 4)"},
      {"hidden", "F    FFN width d_ff (default 4d)"},
      {"layers", "N    encoder layers (default 4; quick 2)"},
      {"max-length", "T  tokens per document (default 128; quick 64)"},
      {"batch", "B     batch size (default 32)"},
      {"lr", "R        peak learning rate (default 1e-3; quick 3e-3)"},
      {"train-docs", "N  use at most N training documents (default all; quick 2000)"},
      {"test-docs", "N   use at most N test documents (default all; quick 400)"},
      examples::device_option(),
      {"throughput",
       "S  only measure the models' training examples/s over S steps on random tokens (no data; "
       "default model std)"}};
#ifdef TPROD_EXAMPLE_MPI
  own.push_back({"parallel",
                 "KIND  how mpirun's ranks share the training: spectral (each rank a block of the encoder's slices; "
                 "t4-tln only), data (each rank a block of every batch), none (default: spectral)"});
#endif
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 000 §6: the standard Transformer encoder against the L-product encoder with p = 4 (DCT) on a text "
      "corpus.",
      "build/data/spam-assassin", own);

  const bool quick = o.quick;
  const auto device = examples::device_choice(o);
  nn::text_classifier_config base;
  base.width = o.count("width", quick ? 64 : 128);
  base.heads = o.count("heads", 4);
  base.hidden = o.count("hidden", 4.0 * double(base.width));
  base.layers = o.count("layers", quick ? 2 : 4);
  base.act = nn::activation::gelu;
  base.dropout = 0.1;
  base.seed = o.seed;
  const std::size_t max_length = o.count("max-length", quick ? 64 : 128);
  examples::fit_config fc = examples::fit_defaults(o);
  fc.epochs = o.epochs.value_or(quick ? 2 : 3);
  fc.batch_size = o.count("batch", 32);
  fc.lr = o.number("lr", quick ? 3e-3 : 1e-3);  // quick: few steps, so a higher peak
  fc.seed = o.seed;
  if (!(fc.lr > 0)) throw std::invalid_argument("--lr must be positive");
  fc.eval_train_limit = 1000;  // the training accuracy on 1000 documents is enough and saves a third of the time
  const nn::alpha_strategy main_pe = nn::alpha_strategy_from(o.extra.count("pe") ? o.extra.at("pe") : "linear");
  const bool throughput = o.extra.count("throughput") > 0;
  const std::string default_models = throughput ? "std" : "std,t4,std-1l";
  const auto variants = parse_models(o.extra.count("models") ? o.extra.at("models") : default_models, main_pe);
  for (const auto& v : variants) nn::paper000_config(base.width, base.heads, base.hidden, v.slices);  // fail early
  parallel_kind parallel = parallel_kind::none;
  bool root = true;
#ifdef TPROD_EXAMPLE_MPI
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  root = rank == 0;
  const std::string kind = o.extra.count("parallel") ? o.extra.at("parallel") : "spectral";
  if (kind == "spectral")
    parallel = parallel_kind::spectral;
  else if (kind == "data")
    parallel = parallel_kind::data;
  else if (kind != "none")
    throw std::invalid_argument("--parallel: '" + kind + "' is not spectral, data or none");
  if (parallel == parallel_kind::none && ranks > 1)
    throw std::invalid_argument("--parallel none runs one process, not " + std::to_string(ranks) + " ranks");
  for (const auto& v : variants)
    if (parallel == parallel_kind::spectral && !v.transform_norm)
      throw std::invalid_argument("--parallel spectral: " + v.name +
                                  " normalizes in the original domain, which mixes the slices at every layer; "
                                  "spread t4-tln by slices, or train " +
                                  v.name + " with --parallel data");
  if (parallel != parallel_kind::none && device != examples::device_kind::cpu)
    throw std::invalid_argument("--parallel " + kind + " trains on the host: add --device cpu");
  if (!root) std::freopen("/dev/null", "w", stdout);  // rank 0 prints for all
  fc.distribution = parallel == parallel_kind::data       ? distributed::data_parallel(MPI_COMM_WORLD)
                    : parallel == parallel_kind::spectral ? distributed::model_parallel(MPI_COMM_WORLD)
                                                          : nn::fit_distribution{};
  std::printf("%s: %d ranks, --parallel %s\n", example_name, ranks, kind.c_str());
#endif
  std::printf(
      "%s: d = %zu, H = %zu, d_ff = %zu, %zu layers, T = %zu, batch %zu, peak lr %.1e, %zu epochs, seeds %llu.., "
      "%zu of them, %zu threads\n",
      example_name, base.width, base.heads, base.hidden, base.layers, max_length, fc.batch_size, fc.lr, fc.epochs,
      static_cast<unsigned long long>(o.seed), o.seeds, num_threads());

  if (throughput) {
    // Random tokens with every position valid, the shape bench/peers/ltransformer_text.py trains in PyTorch; the
    // models are trained but not saved.
    const std::size_t steps = o.count("throughput", 40);
    base.vocabulary = 20002;  // what the corpus gives: 20,000 words and the two special tokens
    const auto data = random_split(steps * fc.batch_size, max_length, base.vocabulary, 1);
    const auto eval = random_split(fc.batch_size, max_length, base.vocabulary, 2);
    fc.epochs = 1;
    fc.eval_train_limit = fc.batch_size;
    fc.progress_every = steps;
    fc.state_directory.clear();  // a measurement, not a run to resume
    const run_setup setup{base, fc, {}, {}, device, parallel, root};
    examples::training_log log(root ? o.out / "throughput_log.csv" : std::filesystem::path());
    for (const auto& v : variants) {
      const auto r = train_variant(v, setup, data, eval, log);
      std::printf("throughput: %.1f training examples/s (%s, %zu parameters, %zu steps of %zu x %zu tokens)\n",
                  r.extra["examples_per_second"].get<double>(), v.name.c_str(), r.parameters, steps, fc.batch_size,
                  max_length);
    }
    return 0;
  }

  const auto data = examples::load_text_dataset(o, max_length, 2000, 400);
  const auto& [vocab, train, test, classes, labels] = data;
  if (root) vocab.save(o.out / "vocabulary.txt");
  base.vocabulary = vocab.size();
  base.classes = classes;
  std::size_t truncated = 0;
  for (auto n : train.lengths) truncated += n == max_length;
  std::printf(
      "%zu training and %zu test documents, labels %s, vocabulary %zu, %.0f%% of the training documents "
      "truncated to %zu tokens\n",
      train.size(), test.size(), labels.c_str(), vocab.size(), 100.0 * double(truncated) / double(train.size()),
      max_length);

  run_setup setup{base,
                  fc,
                  root ? o.out / "checkpoints" : std::filesystem::path(),
                  {{"example", example_name}, {"max_length", std::to_string(max_length)}, {"labels", labels}},
                  device,
                  parallel,
                  root};
  if (root) std::filesystem::create_directories(setup.checkpoints);
  examples::training_log log(root ? o.out / "training_log.csv" : std::filesystem::path());
  auto summaries = examples::over_seeds(o, log, [&](std::uint64_t seed) {
    run_setup run = setup;
    run.base.seed = run.fit.seed = seed;
    std::vector<examples::model_summary> models;
    for (const auto& v : variants) models.push_back(train_variant(v, run, train, test, log));
    return models;
  });
  if (root)
    examples::plot_training_curves(log, o.out / "training_curves.png",
                                   "paper 000 §6 on " + o.data.filename().string() + ": Std vs T4 (p = 4, DCT)");

  const auto std_it = std::find_if(summaries.begin(), summaries.end(), [](const auto& s) { return s.name == "std"; });
  std::printf("\n%-14s %10s %10s %8s %8s %8s %10s\n", "model", "params", "encoder", "ratio", "train", "test",
              "s/epoch");
  for (auto& s : summaries) {
    const double ratio =
        std_it == summaries.end() ? 0 : double(s.encoder_parameters) / double(std_it->encoder_parameters);
    if (std_it != summaries.end()) s.extra["encoder_ratio"] = ratio;
    std::printf("%-14s %10zu %10zu %8.3f %7.2f%% %7.2f%% %10.1f\n", s.name.c_str(), s.parameters, s.encoder_parameters,
                ratio, 100 * s.train_accuracy, 100 * s.test_accuracy, s.seconds_per_epoch);
  }
  if (o.summary && root) {
    const nlohmann::json extra = {
        {"data", o.data.string()},       {"train_documents", train.size()},
        {"test_documents", test.size()}, {"vocabulary", vocab.size()},
        {"width", base.width},           {"heads", base.heads},
        {"hidden", base.hidden},         {"layers", base.layers},
        {"max_length", max_length},      {"epochs", fc.epochs},
        {"batch", fc.batch_size},        {"lr", fc.lr},
        {"first_seed", o.seed},          {"seeds", o.seeds},
        {"threads", num_threads()},      {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test.labels), summaries, extra);
  }
  return 0;
}

}  // namespace

#ifdef TPROD_EXAMPLE_MPI
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = tprod::examples::run_example("ltransformer_text_mpi", argc, argv, run);
  if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);  // a rank that failed alone must not leave the others waiting
  MPI_Finalize();
  return rc;
}
#else
int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
#endif
