// SPDX-License-Identifier: Apache-2.0
// tensorllm_denoise: paper 004 (TensorLLM, Gu et al.) — denoising and compressing a trained Transformer's multi-head
// attention weights by a Tucker decomposition whose factor matrices are shared across the heads, against LASER
// (the rank-k truncated SVD of single weight matrices) at the same storage.
//
// Data: the text corpus ROOT/{train,test}/<label>/*.txt (SpamAssassin ham / spam, scripts/make-text-corpus.sh) and
// the standard Transformer that ltransformer_text trained on it: --checkpoint-dir DIR holds DIR/vocabulary.txt and
// DIR/checkpoints/std.safetensors, whose metadata (the model config, "max_length", "labels") rebuilds the model.
// Model: nn::make_text_classifier with p = 1 and the identity transform (the standard encoder).
// Method: in every encoder layer (or those of --layers), W^Q, W^K, W^V, W^O (d×d each) are tensorized into
// W_all ∈ ℝ^{d×d_h×4×h} (paper eq. 7–8) and replaced by the HOOI reconstruction with shared factors U⁽¹⁾ (d×R1),
// U⁽²⁾ (d_h×R2), U⁽³⁾ (4×R3) and one R1×R2×R3 core per head (eq. 9–14), for a sweep of ranks (R1, R2, R3). LASER
// replaces the same four matrices of the same layers by their rank-k truncated SVDs, with k chosen so that the
// 4·k·2d numbers it stores per layer are closest to the Tucker factors and cores. Each variant is evaluated on the
// test split (and a subset of the training split); nothing is retrained. Paper 004's ablation (Table IV) follows:
// the same Tucker on one of the four matrices at a time (tucker-q, -k, -v, -o at R1×R2 = d/4 × d_h/4). Then Remark
// 3's hybrids (Table III), with LASER on the FFN at rank --ffn-rank: case 1, LASER on W₁ of the FFN alone; case 2,
// LASER on the four attention matrices (at the chosen Tucker's LASER twin's k) and on both FFN matrices; case 3, the
// chosen Tucker on the attention and LASER on both FFN matrices. All are library calls on the model's encoder
// stack: nn::compress_attention, nn::laser_attention, nn::compress_attention_matrix and nn::laser_ffn
// (tprod/nn/model/compress_attention.hpp).
//
// The models are evaluated on the CPU or the GPU (--device cpu|cuda; the GPU by default where there is one); the
// decompositions of the d×d matrices run on the host either way.
//
// With --seeds N (default 3; quick 1) it denoises the checkpoints of ltransformer_text's N seeds
// (checkpoints/std.safetensors for the first, std-seed<S>.safetensors for S = --seed + 1, …) and reports every variant
// as the mean ± sd over them.
//
//   ltransformer_text --data build/data/spam-assassin --models std                  # trains and saves Std
//   tensorllm_denoise --data build/data/spam-assassin --checkpoint-dir example-output/ltransformer_text
//
// Writes into --out: denoise_results.csv, denoise.png (accuracy and weight error against the compression ratio),
// checkpoints/tucker-<R1>x<R2>x<R3>.safetensors (the denoised model at the rank with the best training accuracy).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/device.hpp"
#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/text_data.hpp"
#include "support/training_report.hpp"
#include "tprod/io/safetensors.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "tensorllm_denoise";
using weights = tprod::attention_weights<float>;

/// @brief Multilinear ranks of the shared-factor Tucker decomposition (modes d, d_h, 4).
struct tucker_ranks {
  std::size_t r1 = 0, r2 = 0, r3 = 0;
  std::string text() const { return std::to_string(r1) + "x" + std::to_string(r2) + "x" + std::to_string(r3); }
  /// Numbers stored per layer: h cores, U⁽¹⁾, U⁽²⁾, U⁽³⁾ (the paper's N_compressed).
  std::size_t storage(std::size_t d, std::size_t dh, std::size_t heads) const {
    return r1 * r2 * r3 * heads + d * r1 + dh * r2 + 4 * r3;
  }
};

std::vector<std::string> split_list(const std::string& list, char sep) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, sep);) items.push_back(item);
  return items;
}

/// @brief "R1xR2xR3,…" with 1 ≤ R1 ≤ d, 1 ≤ R2 ≤ d_h, 1 ≤ R3 ≤ 4. @throws std::invalid_argument naming the entry.
std::vector<tucker_ranks> parse_ranks(const std::string& list, std::size_t d, std::size_t dh) {
  std::vector<tucker_ranks> ranks;
  for (const auto& item : split_list(list, ',')) {
    const auto parts = split_list(item, 'x');
    std::vector<std::size_t> r;
    for (const auto& p : parts) {
      char* end = nullptr;
      const long v = std::strtol(p.c_str(), &end, 10);
      if (p.empty() || *end != '\0' || v < 1) break;
      r.push_back(std::size_t(v));
    }
    if (parts.size() != 3 || r.size() != 3 || r[0] > d || r[1] > dh || r[2] > 4)
      throw std::invalid_argument("--ranks: '" + item + "' is not R1xR2xR3 with 1 <= R1 <= d = " + std::to_string(d) +
                                  ", 1 <= R2 <= d_h = " + std::to_string(dh) + ", 1 <= R3 <= 4");
    ranks.push_back({r[0], r[1], r[2]});
  }
  if (ranks.empty()) throw std::invalid_argument("--ranks: the list is empty");
  return ranks;
}

/// @brief The default sweep: R1 = f·d and R2 = f·d_h for a range of fractions f with R3 = 4 (every slab kept), and at
/// f = 1/4 also R3 = 2 (the four slabs W^Q, W^K, W^V, (W^O)ᵀ of a head forced into a 2-dimensional span).
std::vector<tucker_ranks> default_ranks(std::size_t d, std::size_t dh, bool quick) {
  const auto at = [&](double f, std::size_t r3) {
    const auto scaled = [f](std::size_t n) {
      return std::max<std::size_t>(1, std::size_t(std::lround(f * double(n))));
    };
    return tucker_ranks{scaled(d), scaled(dh), r3};
  };
  if (quick) return {at(1.0 / 8, 4), at(1.0 / 2, 4)};
  return {at(1.0 / 16, 4), at(1.0 / 8, 4), at(1.0 / 4, 4), at(1.0 / 4, 2), at(1.0 / 2, 4), at(3.0 / 4, 4)};
}

/// @brief "all" or comma-separated layer indices below `count`. @throws std::invalid_argument naming the entry.
std::vector<std::size_t> parse_layers(const std::string& list, std::size_t count) {
  std::vector<std::size_t> layers;
  if (list == "all") {
    for (std::size_t i = 0; i < count; ++i) layers.push_back(i);
    return layers;
  }
  for (const auto& item : split_list(list, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || std::size_t(v) >= count)
      throw std::invalid_argument("--layers: '" + item + "' is not a layer index in 0.." + std::to_string(count - 1));
    if (std::find(layers.begin(), layers.end(), std::size_t(v)) == layers.end()) layers.push_back(std::size_t(v));
  }
  if (layers.empty()) throw std::invalid_argument("--layers: the list is empty");
  return layers;
}

/// @brief DIR/vocabulary.txt and DIR/checkpoints/<name>.safetensors. @throws std::runtime_error saying to run
/// ltransformer_text when either is missing.
std::pair<std::filesystem::path, std::filesystem::path> checkpoint_files(const std::filesystem::path& dir,
                                                                         const std::string& name) {
  const auto vocabulary = dir / "vocabulary.txt", weights_file = dir / "checkpoints" / (name + ".safetensors");
  for (const auto& f : {vocabulary, weights_file})
    if (!std::filesystem::is_regular_file(f))
      throw std::runtime_error("no trained standard model in " + dir.string() + " (" + f.string() +
                               " is missing): run ltransformer_text first (e.g. ltransformer_text --data DATA "
                               "--models std --out " + dir.string() + ", with --seed and --seeds as here), or pass "
                               "--checkpoint-dir");
  return {vocabulary, weights_file};
}

std::size_t metadata_count(const std::map<std::string, std::string>& meta, const std::string& key,
                           const std::filesystem::path& file) {
  const auto it = meta.find(key);
  char* end = nullptr;
  const long v = it == meta.end() ? 0 : std::strtol(it->second.c_str(), &end, 10);
  if (it == meta.end() || *end != '\0' || v < 1)
    throw std::runtime_error(file.string() + ": the metadata needs a positive integer '" + key + "'");
  return std::size_t(v);
}

/// @brief ‖new − old‖_F/‖old‖_F over all four matrices of all the given layers.
double relative_change(const std::vector<weights>& old_w, const std::vector<weights>& new_w) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < old_w.size(); ++i) {
    const auto add = [&](const dense_matrix<float>& a, const dense_matrix<float>& b) {
      diff += (a - b).cast<double>().squaredNorm();
      norm += a.cast<double>().squaredNorm();
    };
    add(old_w[i].query, new_w[i].query);
    add(old_w[i].key, new_w[i].key);
    add(old_w[i].value, new_w[i].value);
    add(old_w[i].output, new_w[i].output);
  }
  return norm == 0 ? 0 : std::sqrt(diff / norm);
}

/// @brief One evaluated variant: the summary line plus what the table, CSV and plot show.
struct variant_result {
  examples::model_summary summary;
  std::string method, rank;
  double compression_ratio = 1, relative_error = 0, test_loss = 0;
};

/// @brief Draws test accuracy and weight error against the compression ratio for both methods (gnuplot). Returns
/// false, with a note, when gnuplot is missing or fails (the CSV has the numbers).
bool plot_results(const std::vector<variant_result>& rows, double original_accuracy, const std::filesystem::path& png,
                  const std::string& title) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "note: gnuplot not found (apt-get install gnuplot-nox): no plot\n");
    return false;
  }
  // index 0: Tucker with R3 = 4 (the sweep over R1, R2), index 1: LASER, index 2: Tucker with R3 < 4 (points only)
  const auto series = [](const variant_result& r) {
    if (r.method == "laser") return 1;
    if (r.method != "tucker") return -1;
    return r.rank.ends_with("x4") ? 0 : 2;
  };
  std::ostringstream d;
  bool present[3] = {false, false, false}, spread = false;
  for (int index = 0; index < 3; ++index) {
    d << "# series " << index << ": compression_ratio test_accuracy test_accuracy_sd relative_error\n";
    for (const auto& r : rows)
      if (series(r) == index) {
        const double sd = r.summary.extra.value("test_accuracy_sd", 0.0);
        d << r.compression_ratio << ' ' << 100 * r.summary.test_accuracy << ' ' << 100 * sd << ' ' << r.relative_error
          << '\n';
        present[index] = true;
        spread = spread || sd > 0;
      }
    d << "\n\n";
  }
  const auto dat = png.parent_path() / (png.stem().string() + ".dat");
  const auto script = png.parent_path() / (png.stem().string() + ".gp");
  const auto tmp = png.parent_path() / (png.filename().string() + ".tmp.png");
  examples::write_whole_file(dat, d.str());
  // The series that have points (quick runs have no R3 < 4), test accuracy with ± one sd over the seeds when known.
  const char* styles[3] = {"linespoints pt 7", "linespoints pt 5", "points pt 9 ps 1.5"};
  const char* spread_styles[3] = {"yerrorlines pt 7", "yerrorlines pt 5", "yerrorbars pt 9 ps 1.5"};
  const char* titles[3] = {"Tucker, shared factors, R3 = 4", "LASER, same storage", "Tucker, R3 < 4"};
  const auto plot = [&](bool accuracy) {
    std::string line = "plot ";
    for (int index = 0; index < 3; ++index) {
      if (!present[index]) continue;
      const std::string style = accuracy && spread ? spread_styles[index] : styles[index];
      line += "'" + dat.string() + "' index " + std::to_string(index) + " using " +
              (accuracy ? (spread ? "1:2:3" : "1:2") : "1:4") + " with " + style + " title '" + titles[index] + "', ";
    }
    return line;
  };
  std::ostringstream g;
  g << "set terminal pngcairo size 1100,450 noenhanced font ',10'\nset output '" << tmp.string() << "'\n"
    << "set multiplot layout 1,2 title '" << title << (spread ? " (mean ± sd over the seeds)" : "")
    << "'\nset grid\nset logscale x\n"
    << "set xlabel 'compression ratio of the attention weights (N_original / N_compressed)'\n"
    << "set key bottom left\nset ylabel 'test accuracy (%)'\n"
    << plot(true) << 100 * original_accuracy << " with lines dt 2 lc rgb 'black' title 'uncompressed'\n"
    << "set key bottom right\nset ylabel 'relative change of W^Q, W^K, W^V, W^O'\n";
  std::string change = plot(false);
  g << change.substr(0, change.size() - 2) << "\nunset multiplot\n";
  examples::write_whole_file(script, g.str());
  if (std::system(("gnuplot '" + script.string() + "' 2>&1").c_str()) != 0 || !std::filesystem::exists(tmp)) {
    std::fprintf(stderr, "note: gnuplot failed on %s: no plot\n", script.c_str());
    return false;
  }
  std::filesystem::rename(tmp, png);
  return true;
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 004 (TensorLLM): shared-factor Tucker denoising of a trained Transformer's attention weights against "
      "LASER at the same storage, on a text corpus.",
      "build/data/spam-assassin",
      {{"checkpoint-dir", "DIR  what ltransformer_text wrote (default example-output/ltransformer_text)"},
       {"ranks", "LIST        Tucker ranks R1xR2xR3,... (default: a sweep over fractions of d and d_h)"},
       {"layers", "LIST       encoder layers to denoise: all (default) or indices, e.g. 3 (the paper's layer-selective "
                  "use)"},
       {"test-docs", "N    evaluate on N test documents (default all; quick 200)"},
       {"train-docs", "N   training accuracy on N training documents (default 500; quick 100)"},
       {"batch", "B        evaluation batch size (default 64)"},
       {"ffn-rank", "K     LASER's rank on the FFN matrices in Remark 3's hybrids (default d/4)"},
       examples::device_option()});
  const auto device = examples::device_choice(o);
  if (o.epochs) std::printf("note: --epochs has no effect (nothing is trained)\n");
  if (o.resume) std::printf("note: --resume has no effect (nothing is trained, so there is no state to resume)\n");
  if (o.zero_gradients)
    throw std::invalid_argument("--zero-gradients: " + std::string(example_name) +
                                " trains nothing; give it a checkpoint trained with --zero-gradients instead");
  const std::filesystem::path dir =
      o.extra.count("checkpoint-dir") ? o.extra.at("checkpoint-dir") : "example-output/ltransformer_text";
  const auto [vocabulary_file, weights_file] = checkpoint_files(dir, "std");

  // The model the checkpoint belongs to, from its metadata.
  const auto meta = io::safetensors_reader(weights_file).metadata();
  if (!meta.count("transform") || meta.at("transform") != "identity")
    throw std::runtime_error(weights_file.string() + ": not a standard Transformer (metadata 'transform' is '" +
                             (meta.count("transform") ? meta.at("transform") : std::string()) +
                             "', expected 'identity')");
  const nn::text_classifier_config cfg = nn::text_classifier_config_from(meta);
  if (cfg.slices != 1) throw std::runtime_error(weights_file.string() + ": the standard model must have slices = 1");
  const std::size_t max_length = metadata_count(meta, "max_length", weights_file);
  const auto vocab = io::vocabulary::load(vocabulary_file);
  if (vocab.size() != cfg.vocabulary)
    throw std::runtime_error(vocabulary_file.string() + " has " + std::to_string(vocab.size()) +
                             " tokens but the model's embedding has " + std::to_string(cfg.vocabulary));
  const std::size_t d = cfg.width, heads = cfg.heads, dh = d / heads;
  std::printf("%s: %s — d = %zu, H = %zu, d_h = %zu, d_ff = %zu, %zu layers, T = %zu, %zu seeds, %zu threads\n",
              example_name, weights_file.c_str(), d, heads, dh, cfg.hidden, cfg.layers, max_length, o.seeds,
              num_threads());

  const auto layers = parse_layers(o.extra.count("layers") ? o.extra.at("layers") : "all", cfg.layers);
  const auto ranks = o.extra.count("ranks") ? parse_ranks(o.extra.at("ranks"), d, dh) : default_ranks(d, dh, o.quick);
  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  std::string labels;
  for (const auto& l : corpus.labels()) labels.append(labels.empty() ? "" : ",").append(l);
  if (meta.count("labels") && meta.at("labels") != labels)
    throw std::runtime_error(o.data.string() + " has the labels " + labels + " but the model was trained on " +
                             meta.at("labels"));
  const std::size_t n_test = o.extra.count("test-docs") ? o.count("test-docs", 0) : o.quick ? 200 : 0;
  const std::size_t n_train = o.count("train-docs", o.quick ? 100 : 500);
  const auto test = examples::encode_documents(examples::pick_documents(corpus.test, n_test, 12), vocab, max_length);
  const auto train = examples::encode_documents(examples::pick_documents(corpus.train, n_train, 11), vocab, max_length);
  const std::size_t batch = o.count("batch", 64);
  const std::size_t ffn_rank = o.count("ffn-rank", std::max<std::size_t>(1, d / 4));
  if (ffn_rank < 1 || ffn_rank > std::min(d, cfg.hidden))
    throw std::invalid_argument("--ffn-rank " + std::to_string(ffn_rank) + " must lie in 1..min(d, d_ff) = 1.." +
                                std::to_string(std::min(d, cfg.hidden)));
  std::printf("%zu test and %zu training documents, labels %s\n", test.size(), train.size(), labels.c_str());
  const std::size_t dense_storage = layers.size() * 4 * d * d;  // the matrices being replaced
  std::string layer_list;
  for (std::size_t i : layers) layer_list.append(layer_list.empty() ? "" : ",").append(std::to_string(i));

  // Denoises the model of one checkpoint at every rank, with LASER beside it; returns the evaluations (the same
  // variants in the same order for every checkpoint) and saves the Tucker rank with the best training accuracy as
  // checkpoints/tucker-<ranks><suffix>.safetensors.
  const auto denoise = [&](const std::filesystem::path& file, const std::string& suffix) {
    return examples::with_device(device, [&](auto space) {  // the evaluations run there
      const auto file_meta = io::safetensors_reader(file).metadata();
      auto model = nn::make_text_classifier<float>(cfg, identity_transform{}, space);
      using tensor = nn::layer_tensor<decltype(model), float>;
      nn::load_checkpoint<float>(file, model);  // a model of another shape fails here, naming the file and tensor
      auto& stack = model.template get<3>();
      const auto current_weights = [&] {
        std::vector<weights> w;
        for (std::size_t i : layers) w.push_back(nn::attention_weights_of(stack[i].attn));
        return w;
      };
      const std::vector<weights> original = current_weights();
      // Compresses the chosen layers of the original model with a library call on the stack
      // (nn/model/compress_attention.hpp) and returns the numbers the compressed attention matrices take, from the
      // per-layer compression ratios.
      const auto compress_original = [&](const auto& compress) {
        for (std::size_t j = 0; j < layers.size(); ++j) nn::set_attention_weights(stack[layers[j]].attn, original[j]);
        double storage = 0;
        for (const auto& r : compress()) storage += double(4 * d * d) / r.compression_ratio;
        return std::size_t(std::llround(storage));
      };
      const auto tucker_on_layers = [&](const tucker_ranks& rk) {
        return compress_original(
            [&] { return nn::compress_attention(stack, layers, {.ranks = {rk.r1, rk.r2, rk.r3}}); });
      };

      std::size_t total_parameters = 0, encoder_parameters = 0;
      model.for_each_parameter([&](std::string_view name, tensor& v, tensor&) {
        total_parameters += v.size();
        if (name.rfind("encoder.", 0) == 0) encoder_parameters += v.size();
      });

      std::vector<variant_result> rows;
      const auto make_train = [&](const std::vector<std::size_t>& idx) { return train.batch(idx); };
      const auto make_test = [&](const std::vector<std::size_t>& idx) { return test.batch(idx); };
      // Evaluates the model as it is now; `storage` is what the replaced attention matrices take in compressed form.
      // `dense`: what those matrices take uncompressed (0: the four attention matrices of the layers).
      const auto evaluate = [&](const std::string& method, const std::string& rank, std::size_t storage,
                                double relative_error, std::size_t dense = 0) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto [train_loss, train_accuracy] = nn::evaluate<float>(model, train.size(), batch, make_train);
        const auto [test_loss, test_accuracy] = nn::evaluate<float>(model, test.size(), batch, make_test);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        variant_result r;
        r.method = method;
        r.rank = rank;
        if (dense == 0) dense = dense_storage;
        r.compression_ratio = double(dense) / double(storage);
        r.relative_error = relative_error;
        r.test_loss = test_loss;
        const std::string name = method == "original" ? method : method + "-" + rank;
        r.summary = {name, total_parameters - dense + storage, encoder_parameters - dense + storage, train_accuracy,
                     test_accuracy, seconds};
        r.summary.extra = {{"method", method},
                           {"rank", rank},
                           {"compression_ratio", r.compression_ratio},
                           {"relative_error", relative_error},
                           {"test_loss", test_loss},
                           {"train_loss", train_loss}};
        std::printf("[%s%s] CR %.2f, weights changed by %.4f: train accuracy %.2f%%, test accuracy %.2f%%, test loss "
                    "%.4f (%.0f examples/s)\n",
                    name.c_str(), suffix.c_str(), r.compression_ratio, relative_error, 100 * train_accuracy,
                    100 * test_accuracy, test_loss, double(train.size() + test.size()) / seconds);
        std::fflush(stdout);
        rows.push_back(std::move(r));
      };

      evaluate("original", "full", dense_storage, 0);
      std::set<std::size_t> laser_done;  // LASER ranks already evaluated (two Tucker ranks may share one)
      for (const auto& rk : ranks) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t storage = tucker_on_layers(rk);
        std::printf("[tucker-%s%s] %zu layers decomposed by HOOI in %.2f s\n", rk.text().c_str(), suffix.c_str(),
                    layers.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        evaluate("tucker", rk.text(), storage, relative_change(original, current_weights()));

        // LASER at the same storage: 4 matrices of k(d + d) numbers per layer.
        const std::size_t k =
            std::clamp<std::size_t>(std::size_t(std::lround(double(rk.storage(d, dh, heads)) / double(8 * d))), 1, d);
        if (!laser_done.insert(k).second) continue;
        const std::size_t laser_storage = compress_original([&] { return nn::laser_attention(stack, layers, k); });
        evaluate("laser", std::to_string(k), laser_storage, relative_change(original, current_weights()));
      }

      // Paper 004's ablation (Table IV): the same tensorisation and shared-factor Tucker on one matrix at a time, the
      // other three left dense, at (R1, R2) = (d/4, d_h/4) (the 32x8 of the sweep at d = 128).
      const std::size_t a1 = std::max<std::size_t>(1, d / 4), a2 = std::max<std::size_t>(1, dh / 4);
      const std::pair<nn::attention_matrix, const char*> one_matrix[] = {{nn::attention_matrix::query, "q"},
                                                                         {nn::attention_matrix::key, "k"},
                                                                         {nn::attention_matrix::value, "v"},
                                                                         {nn::attention_matrix::output, "o"}};
      for (const auto& [which, letter] : one_matrix) {
        const std::size_t storage =
            compress_original([&] { return nn::compress_attention_matrix(stack, layers, which, a1, a2); });
        evaluate(std::string("tucker-") + letter, std::to_string(a1) + "x" + std::to_string(a2), storage,
                 relative_change(original, current_weights()));
      }

      // The denoised model kept: the Tucker rank with the best training accuracy (ties: the higher compression),
      // chosen without looking at the test split.
      const variant_result* best = nullptr;
      for (const auto& r : rows)
        if (r.method == "tucker" && (!best || r.summary.train_accuracy > best->summary.train_accuracy ||
                                     (r.summary.train_accuracy == best->summary.train_accuracy &&
                                      r.compression_ratio > best->compression_ratio)))
          best = &r;
      const auto chosen = parse_ranks(best->rank, d, dh).front();

      // Remark 3's hybrids (Table III): LASER on the FFN (rank ffn_rank) with LASER or the chosen Tucker on the
      // attention. The FFN is put back afterwards, so the saved model is the Tucker-denoised one alone.
      std::vector<std::pair<tensor, tensor>> original_ffn;
      for (std::size_t i : layers) original_ffn.emplace_back(stack[i].ffn.w1.data(), stack[i].ffn.w2.data());
      const std::size_t ffn_dense = layers.size() * 2 * d * cfg.hidden;
      const auto restore_ffn = [&] {
        for (std::size_t j = 0; j < layers.size(); ++j) {
          stack[layers[j]].ffn.w1.data() = original_ffn[j].first;
          stack[layers[j]].ffn.w2.data() = original_ffn[j].second;
        }
      };
      const auto laser_on_ffn = [&](std::span<const nn::ffn_matrix> matrices) {  // the numbers the FFNs then take
        restore_ffn();
        double storage = 0;
        for (const auto& r : nn::laser_ffn(stack, layers, ffn_rank, matrices))
          storage += double(2 * d * cfg.hidden) / r.compression_ratio;
        return std::size_t(std::llround(storage));
      };
      const std::string ffn_text = "ffn" + std::to_string(ffn_rank);
      const nn::ffn_matrix input_only[] = {nn::ffn_matrix::input};
      for (std::size_t j = 0; j < layers.size(); ++j) nn::set_attention_weights(stack[layers[j]].attn, original[j]);
      // Named by the case and the FFN rank only: the attention's rank follows the chosen Tucker, which a seed may change.
      evaluate("case1-laser-w1", ffn_text, dense_storage + laser_on_ffn(input_only), 0, dense_storage + ffn_dense);
      const std::size_t twin =
          std::clamp<std::size_t>(std::size_t(std::lround(double(chosen.storage(d, dh, heads)) / double(8 * d))), 1, d);
      const std::size_t laser_both = compress_original([&] { return nn::laser_attention(stack, layers, twin); });
      std::printf("(case 2: LASER k = %zu on the attention, the twin of Tucker %s; case 3: that Tucker)\n", twin,
                  chosen.text().c_str());
      evaluate("case2-laser-all", ffn_text, laser_both + laser_on_ffn(nn::both_ffn_matrices),
               relative_change(original, current_weights()), dense_storage + ffn_dense);
      const std::size_t tucker_storage = tucker_on_layers(chosen);
      evaluate("case3-tucker-laser", ffn_text, tucker_storage + laser_on_ffn(nn::both_ffn_matrices),
               relative_change(original, current_weights()), dense_storage + ffn_dense);
      restore_ffn();
      tucker_on_layers(chosen);
      auto out_meta = file_meta;
      out_meta["example"] = example_name;
      out_meta["denoised"] = "multihead_tucker";
      out_meta["tucker_ranks"] = chosen.text();
      out_meta["denoised_layers"] = layer_list;
      std::filesystem::create_directories(o.out / "checkpoints");
      const auto saved = o.out / "checkpoints" / ("tucker-" + chosen.text() + suffix + ".safetensors");
      nn::save_checkpoint<float>(saved, model, out_meta);
      std::printf("saved the denoised model (Tucker %s, best training accuracy) to %s\n", chosen.text().c_str(),
                  saved.c_str());
      return std::make_pair(std::move(rows), "tucker-" + chosen.text());
    });
  };

  // One pass per seed of ltransformer_text's run; the rows become the means over them (examples::combine_seeds).
  std::vector<std::vector<examples::model_summary>> runs;
  std::vector<std::uint64_t> seeds;
  std::vector<variant_result> rows;
  std::vector<std::string> selected;
  for (std::size_t k = 0; k < o.seeds; ++k) {
    const std::uint64_t seed = o.seed + k;
    const auto file = k == 0 ? weights_file : checkpoint_files(dir, "std-seed" + std::to_string(seed)).second;
    if (o.seeds > 1) std::printf("\n== %s (seed %llu) ==\n", file.c_str(), static_cast<unsigned long long>(seed));
    auto [seed_rows, chosen] = denoise(file, k == 0 ? "" : "-seed" + std::to_string(seed));
    std::vector<examples::model_summary> summaries;
    for (const auto& r : seed_rows) summaries.push_back(r.summary);
    runs.push_back(std::move(summaries));
    seeds.push_back(seed);
    selected.push_back(chosen);
    if (k == 0) rows = std::move(seed_rows);
  }
  const auto combined = examples::combine_seeds(runs, seeds);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].summary = combined[i];
    rows[i].relative_error = combined[i].extra["relative_error"].get<double>();
    rows[i].test_loss = combined[i].extra["test_loss"].get<double>();
  }
  if (o.seeds > 1) {
    std::printf("\ntest accuracy over %zu seeds (mean ± sd):\n", o.seeds);
    for (const auto& r : rows)
      std::printf("  %-18s %6.2f%% ± %.2f\n", r.summary.name.c_str(), 100 * r.summary.test_accuracy,
                  100 * r.summary.extra["test_accuracy_sd"].get<double>());
  }

  std::sort(rows.begin() + 1, rows.end(), [](const auto& a, const auto& b) {
    return a.method != b.method ? a.method > b.method : a.compression_ratio < b.compression_ratio;
  });
  std::ostringstream csv;
  csv << "name,method,rank,compression_ratio,relative_error,parameters,encoder_parameters,train_accuracy,"
         "test_accuracy,test_loss,seconds\n";
  std::printf("\n%-18s %8s %10s %10s %8s %8s %8s\n", "variant", "CR", "encoder", "change", "train", "test", "loss");
  for (const auto& r : rows) {
    const auto& s = r.summary;
    csv << s.name << ',' << r.method << ',' << r.rank << ',' << r.compression_ratio << ',' << r.relative_error << ','
        << s.parameters << ',' << s.encoder_parameters << ',' << s.train_accuracy << ',' << s.test_accuracy << ','
        << r.test_loss << ',' << s.seconds_per_epoch << '\n';
    std::printf("%-18s %8.2f %10zu %10.4f %7.2f%% %7.2f%% %8.4f\n", s.name.c_str(), r.compression_ratio,
                s.encoder_parameters, r.relative_error, 100 * s.train_accuracy, 100 * s.test_accuracy, r.test_loss);
  }
  examples::write_whole_file(o.out / "denoise_results.csv", csv.str());
  plot_results(rows, rows.front().summary.test_accuracy, o.out / "denoise.png",
               "paper 004 on " + o.data.filename().string() + ": shared-factor Tucker vs LASER, layers " + layer_list);

  if (o.summary) {
    std::vector<examples::model_summary> summaries;
    for (const auto& r : rows) summaries.push_back(r.summary);
    const nlohmann::json extra = {{"data", o.data.string()},
                                  {"checkpoint", weights_file.string()},
                                  {"first_seed", o.seed},
                                  {"seeds", o.seeds},
                                  {"test_documents", test.size()},
                                  {"train_documents", train.size()},
                                  {"width", d},
                                  {"heads", heads},
                                  {"layers", cfg.layers},
                                  {"denoised_layers", layer_list},
                                  {"max_length", max_length},
                                  {"selected", selected},
                                  {"seconds_per_epoch_is", "the evaluation time (nothing is trained)"},
                                  {"threads", num_threads()},
                                  {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test.labels), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
