// SPDX-License-Identifier: Apache-2.0
// gpt2_tensorllm: paper 004 (TensorLLM, Gu et al.) on a GPT-2-architecture model in the published layout — the
// shared-factor multi-head Tucker denoising of every layer's attention, LASER on the attention and on the MLP, and
// the hybrid, each judged by held-out perplexity, with the numbers each form stores, and the compressed model
// written back as a Hugging Face GPT-2 folder.
//
// Model: a GPT-2 checkpoint folder (--model DIR: config.json and model.safetensors, read by nn::load_gpt2), or,
// without --model, a small GPT-2 trained here by next-token prediction on the corpus's training messages (one per
// seed; written to OUT/gpt2-seed<S>/ in the published layout, then read back from there).
// Data: the text corpus ROOT/{train,test}/<label>/*.txt (scripts/make-text-corpus.sh), tokenized by GPT-2's
// byte-level BPE (--tokenizer DIR: encoder.json and vocab.bpe, or vocab.json and merges.txt;
// scripts/get-gpt2-vocabulary.sh); each message cut into at most --windows windows of --max-length tokens. A
// checkpoint of your own reads GPT-2's ids as they are. The model trained here keeps the --vocabulary most frequent
// BPE tokens of the training windows and one id for all others (<unk>), so that its head is not 50,257 wide
// (OUT/vocabulary.txt: each id, its BPE id and the bytes it stands for, as a JSON string).
// Method: every variant starts from the model read back from its folder. "gpt2" is the model itself;
// "tucker-R1xR2xR3" replaces W^Q, W^K, W^V, W^O of every layer by the multi-head Tucker reconstruction at those
// ranks (nn::compress_attention, paper 004 eq. 7–14); "laser-att-k" replaces the same four matrices by rank-k
// truncated SVDs, k chosen so that LASER stores about as many numbers as the first Tucker rank; "laser-mlp-k"
// replaces the MLP's c_fc (W₁) of every layer by its rank-k SVD (nn::laser_ffn); "tucker+mlp" is the first Tucker
// rank and laser-mlp together (paper 004's Remark 3, case 3). Nothing is retrained.
//
//   gpt2_tensorllm --data build/data/spam-assassin                       # trains a small GPT-2 per seed
//   gpt2_tensorllm --model path/to/gpt2 --ranks 384x32x4,192x32x4        # a checkpoint of your own
//
// Writes into --out: gpt2-seed<S>/ (the trained models), gpt2-tensorllm/ (the first seed's tucker+mlp model, the
// published layout), training_log.csv, summary.json (--summary).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/text_data.hpp"
#include "support/token_windows.hpp"
#include "support/training_report.hpp"
#include "tprod/io/bpe_tokenizer.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model/gpt2.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "gpt2_tensorllm";
using model_type = nn::gpt2_model<float>;

struct tucker_ranks {
  std::size_t r1 = 0, r2 = 0, r3 = 0;
  std::string text() const { return std::to_string(r1) + "x" + std::to_string(r2) + "x" + std::to_string(r3); }
  /// Numbers stored per layer: h cores, U⁽¹⁾ (d×R1), U⁽²⁾ (d_h×R2), U⁽³⁾ (4×R3).
  std::size_t storage(std::size_t d, std::size_t dh, std::size_t heads) const {
    return r1 * r2 * r3 * heads + d * r1 + dh * r2 + 4 * r3;
  }
};

std::vector<tucker_ranks> parse_ranks(const std::string& list) {
  std::vector<tucker_ranks> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    tucker_ranks r;
    char x1 = 0, x2 = 0;
    std::stringstream one(item);
    if (!(one >> r.r1 >> x1 >> r.r2 >> x2 >> r.r3) || x1 != 'x' || x2 != 'x' || !one.eof() || !r.r1 || !r.r2 || !r.r3)
      throw std::invalid_argument("--ranks: '" + item + "' is not R1xR2xR3 with positive ranks");
    out.push_back(r);
  }
  if (out.empty()) throw std::invalid_argument("--ranks: no ranks given");
  return out;
}

/// The data every variant is judged on.
struct evaluation {
  const examples::token_windows& train;
  const examples::token_windows& test;
  std::size_t train_limit, batch;
};

/// One variant's line: the model after `change`, evaluated on both splits.
template <class Change>
examples::model_summary variant(const std::string& name, const std::filesystem::path& folder, const evaluation& e,
                                Change&& change) {
  auto [config, model] = nn::load_gpt2<float>(folder);
  const double stored_attention = change(config, model);
  const auto make_train = [&](const auto& idx) { return e.train.batch(idx); };
  const auto make_test = [&](const auto& idx) { return e.test.batch(idx); };
  const auto [train_loss, train_acc] =
      nn::evaluate<float>(model, std::min(e.train_limit, e.train.size()), e.batch, make_train);
  const auto [test_loss, test_acc] = nn::evaluate<float>(model, e.test.size(), e.batch, make_test);
  const std::size_t head = config.tied ? config.width * config.vocabulary : 0;  // a tied head is the embedding
  examples::model_summary s{name, examples::parameter_count(model) - head,
                            examples::parameter_count(model, "decoder."), train_acc, test_acc, 0};
  s.extra = {{"test_loss", test_loss},
             {"test_perplexity", std::exp(test_loss)},
             {"train_perplexity", std::exp(train_loss)},
             {"attention_stored", stored_attention}};
  std::printf("  %-18s test perplexity %9.2f   token accuracy %6.2f%%   attention numbers stored %.0f\n",
              name.c_str(), std::exp(test_loss), 100 * test_acc, stored_attention);
  return s;
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 004 (TensorLLM) on a GPT-2-architecture model in the Hugging Face layout: multi-head Tucker denoising "
      "and LASER, judged by held-out perplexity; the model trained here or read with --model.",
      "build/data/spam-assassin",
      {{"model", "DIR     a GPT-2 checkpoint folder (default: train a small GPT-2 per seed)"},
       {"tokenizer", "DIR GPT-2's tokenizer files (default build/data/gpt2-vocabulary)"},
       {"ranks", "LIST    Tucker ranks R1xR2xR3,... (default d/2 x d_h/2 x 4, d/4 x d_h/2 x 2, d/8 x d_h/4 x 2)"},
       {"mlp-rank", "K    LASER's rank on the MLP's c_fc (default d/4)"},
       {"vocabulary", "V  trained model: the V − 1 most frequent BPE tokens and <unk> (default 8000; quick 2000)"},
       {"width", "D       trained model's width (default 128; quick 32)"},
       {"heads", "H       attention heads (default 4)"},
       {"layers", "N      layers (default 2)"},
       {"max-length", "T  tokens per window (default 64; quick 32)"},
       {"windows", "W     at most W windows from the start of every message (default 2)"},
       {"batch", "B       batch size in windows (default 16)"},
       {"lr", "R          peak learning rate (default 2e-3)"},
       {"train-docs", "N  at most N training messages (default 2000; quick 600)"},
       {"test-docs", "N   at most N test messages (default 400; quick 150)"}});
  const bool quick = o.quick;
  const auto tokenizer = io::bpe_tokenizer::from_folder(o.extra.count("tokenizer") ? std::filesystem::path(o.extra.at("tokenizer"))
                                                                 : std::filesystem::path("build/data/gpt2-vocabulary"));
  const bool own_model = o.extra.count("model") != 0;
  nn::gpt2_config base;
  if (own_model) {
    base = nn::read_gpt2_config(std::filesystem::path(o.extra.at("model")) / "config.json");
    if (base.vocabulary < tokenizer.size())
      throw std::invalid_argument("the model's vocabulary (" + std::to_string(base.vocabulary) +
                                  ") is smaller than the tokenizer's (" + std::to_string(tokenizer.size()) + ")");
  } else {
    base.vocabulary = std::min(o.count("vocabulary", quick ? 2000 : 8000), tokenizer.size());
    if (base.vocabulary < 2) throw std::invalid_argument("--vocabulary must be at least 2");
    base.width = o.count("width", quick ? 32 : 128);
    base.heads = o.count("heads", 4);
    base.layers = o.count("layers", 2);
    base.hidden = 4 * base.width;
    base.positions = o.count("max-length", quick ? 32 : 64);
    (void)base.layer();  // fail early on sizes that do not make a layer
  }
  const std::size_t length = std::min(o.count("max-length", quick ? 32 : 64), base.positions);
  const std::size_t windows = o.count("windows", 2), d = base.width, dh = base.width / base.heads;
  const auto ranks = parse_ranks(o.extra.count("ranks")
                                     ? o.extra.at("ranks")
                                     : std::to_string(d / 2) + "x" + std::to_string(std::max<std::size_t>(dh / 2, 1)) +
                                           "x4," + std::to_string(d / 4) + "x" +
                                           std::to_string(std::max<std::size_t>(dh / 2, 1)) + "x2," +
                                           std::to_string(std::max<std::size_t>(d / 8, 1)) + "x" +
                                           std::to_string(std::max<std::size_t>(dh / 4, 1)) + "x2");
  const std::size_t mlp_rank = o.count("mlp-rank", std::max<std::size_t>(d / 4, 1));
  // LASER on the four matrices stores 4·k·2d numbers per layer: k as close as can be to the first Tucker's storage.
  const std::size_t laser_rank = std::clamp<std::size_t>(
      std::size_t(std::lround(double(ranks[0].storage(d, dh, base.heads)) / double(8 * d))), 1, d);

  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  const auto train_docs = examples::pick_documents(corpus.train, o.count("train-docs", quick ? 600 : 2000), 11);
  const auto test_docs = examples::pick_documents(corpus.test, o.count("test-docs", quick ? 150 : 400), 12);
  // Every message's first length·windows BPE ids (from a prefix long enough: a token is at least one byte).
  std::map<const io::text_example*, std::vector<std::size_t>> bpe;
  for (const auto* docs : {&train_docs, &test_docs})
    for (const auto* doc : *docs) {
      auto ids = tokenizer.encode(std::string_view(doc->text).substr(0, 16 * length * windows));
      ids.resize(std::min(ids.size(), length * windows));
      bpe[doc] = std::move(ids);
    }
  // The trained model's ids: the V − 1 most frequent training tokens by rank, then <unk> (ties by BPE id).
  std::vector<std::size_t> compact(tokenizer.size(), base.vocabulary - 1);
  if (!own_model) {
    std::vector<std::size_t> count(tokenizer.size()), order(tokenizer.size());
    for (const auto* doc : train_docs)
      for (auto id : bpe[doc]) ++count[id];
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return count[a] > count[b]; });
    std::string listing;
    for (std::size_t rank = 0; rank + 1 < base.vocabulary; ++rank) {
      compact[order[rank]] = rank;
      const std::size_t id = order[rank];
      listing += std::to_string(rank) + "\t" + std::to_string(id) + "\t" +
                 nlohmann::json(tokenizer.decode(std::span<const std::size_t>(&id, 1)))  // quoted, escaped
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                 "\n";
    }
    std::filesystem::create_directories(o.out);
    examples::write_whole_file(o.out / "vocabulary.txt", listing + std::to_string(base.vocabulary - 1) + "\t-\t<unk>\n");
  } else {
    std::iota(compact.begin(), compact.end(), std::size_t(0));
  }
  const auto ids_of = [&](const io::text_example& doc) {
    std::vector<std::size_t> ids = bpe.at(&doc);
    for (auto& id : ids) id = compact[id];
    return ids;
  };
  const std::size_t pad = own_model ? tokenizer.id("<|endoftext|>") : base.vocabulary - 1;
  const auto train = examples::cut_windows(train_docs, ids_of, length, windows, pad);
  const auto test = examples::cut_windows(test_docs, ids_of, length, windows, pad);
  const auto train_targets = train.targets(), test_targets = test.targets();
  if (test_targets.empty()) throw std::invalid_argument("the test messages hold no window of two tokens");
  const double unigram = examples::unigram_perplexity(train_targets, test_targets, base.vocabulary);
  const double unk_share =
      own_model ? 0.0
                : double(std::count(test_targets.begin(), test_targets.end(), base.vocabulary - 1)) /
                      double(test_targets.size());
  std::printf("%s: %zu training messages -> %zu windows (%zu predicted tokens), %zu test messages -> %zu windows "
              "(%zu tokens), GPT-2 BPE, the model's %zu ids (%.1f%% of the test tokens <unk>); unigram test "
              "perplexity %.1f\n"
              "model: %s, d = %zu, %zu heads, %zu layers, T = %zu; Tucker ranks",
              example_name, train_docs.size(), train.size(), train_targets.size(), test_docs.size(), test.size(),
              test_targets.size(), base.vocabulary, 100 * unk_share, unigram, own_model ? o.extra.at("model").c_str() : "trained here",
              d, base.heads, base.layers, length);
  for (const auto& r : ranks) std::printf(" %s", r.text().c_str());
  std::printf(", LASER attention k = %zu, MLP k = %zu\n", laser_rank, mlp_rank);

  examples::fit_config fc = examples::fit_defaults(o);
  fc.epochs = o.epochs.value_or(quick ? 5 : 4);
  fc.batch_size = o.count("batch", 16);
  fc.lr = o.number("lr", 2e-3);
  fc.eval_train_limit = quick ? 200 : 500;
  if (!(fc.lr > 0)) throw std::invalid_argument("--lr must be positive");
  const evaluation e{train, test, quick ? std::size_t(200) : std::size_t(500), 32};
  examples::training_log log(o.out / "training_log.csv");
  const std::size_t dense_attention = 4 * d * d * base.layers;

  auto summaries = examples::over_seeds(o, log, [&](std::uint64_t seed) {
    std::filesystem::path folder = own_model ? std::filesystem::path(o.extra.at("model"))
                                             : o.out / ("gpt2-seed" + std::to_string(seed));
    if (!own_model) {  // train, then write in the published layout: every variant reads it back from there
      auto c = base;
      auto model = nn::make_gpt2<float>(c, seed);
      fc.seed = seed;
      examples::fit<float>(
          model, "gpt2", train.size(), [&](const auto& idx) { return train.batch(idx); }, test.size(),
          [&](const auto& idx) { return test.batch(idx); }, fc, log);
      nn::save_gpt2<float>(folder, model, c);
    }
    const auto all = std::vector<std::size_t>{};
    const auto tucker = [&](const tucker_ranks& r) {
      return [&, r](nn::gpt2_config&, model_type& m) {
        tucker_options t;
        t.ranks = {r.r1, r.r2, r.r3};
        nn::compress_attention(m.get<3>(), all, t);
        return double(r.storage(d, dh, base.heads) * base.layers);
      };
    };
    const auto mlp = [&](model_type& m) {
      const nn::ffn_matrix input[] = {nn::ffn_matrix::input};
      nn::laser_ffn(m.get<3>(), all, mlp_rank, input);
    };
    std::vector<examples::model_summary> out;
    out.push_back(variant("gpt2", folder, e, [&](auto&, auto&) { return double(dense_attention); }));
    for (const auto& r : ranks) out.push_back(variant("tucker-" + r.text(), folder, e, tucker(r)));
    out.push_back(variant("laser-att-" + std::to_string(laser_rank), folder, e, [&](auto&, model_type& m) {
      nn::laser_attention(m.get<3>(), all, laser_rank);
      return double(8 * d * laser_rank * base.layers);
    }));
    out.push_back(variant("laser-mlp-" + std::to_string(mlp_rank), folder, e, [&](auto&, model_type& m) {
      mlp(m);
      return double(dense_attention);
    }));
    out.push_back(variant("tucker+mlp", folder, e, [&](nn::gpt2_config& c, model_type& m) {
      const double stored = tucker(ranks[0])(c, m);
      mlp(m);
      if (seed == o.seed) {  // the first seed's hybrid, in the layout it was read in
        nn::save_gpt2<float>(o.out / "gpt2-tensorllm", m, c);
        std::printf("  wrote %s (the published layout)\n", (o.out / "gpt2-tensorllm").c_str());
      }
      return stored;
    }));
    return out;
  });

  std::printf("\n%-18s %10s %12s %12s %12s\n", "variant", "params", "attention", "test ppl", "token acc");
  for (const auto& s : summaries)
    std::printf("%-18s %10zu %12.0f %12.2f %11.2f%%\n", s.name.c_str(), s.parameters,
                s.extra["attention_stored"].get<double>(), s.extra["test_perplexity"].get<double>(),
                100 * s.test_accuracy);
  std::printf("%-18s %10s %12s %12.2f  (add-one smoothed, fitted to the training tokens)\n", "unigram", "-", "-",
              unigram);
  if (o.summary) {
    const nlohmann::json extra = {{"data", o.data.string()},
                                  {"model", own_model ? o.extra.at("model") : std::string("trained here")},
                                  {"unigram_perplexity", unigram},
                                  {"vocabulary", base.vocabulary},
                                  {"test_unk_share", unk_share},
                                  {"train_tokens", train_targets.size()},
                                  {"test_tokens", test_targets.size()},
                                  {"width", d},
                                  {"heads", base.heads},
                                  {"layers", base.layers},
                                  {"max_length", length},
                                  {"windows", windows},
                                  {"epochs", own_model ? 0 : fc.epochs},
                                  {"laser_attention_rank", laser_rank},
                                  {"mlp_rank", mlp_rank},
                                  {"first_seed", o.seed},
                                  {"seeds", o.seeds},
                                  {"threads", num_threads()}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test_targets), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
