// SPDX-License-Identifier: Apache-2.0
// language_model: a decoder-only language model on real text (paper 000's decoder layer under a causal mask,
// §5.9; the language-modelling setting of paper 003) — next-token prediction on the corpus's message bodies, the
// standard decoder ("std", p = 1) against the L-decoder ("t4", p = 4 slices under the DCT), the one-layer standard
// decoder ("std-1l") and multi-linear attention in its causal form ("mla", paper 003), with the held-out
// perplexity beside a unigram model's on the same split, and text generated from prompts.
//
// Data: a text corpus in the folder-per-class layout ROOT/{train,test}/<label>/*.txt — the SpamAssassin corpus
// built by scripts/make-text-corpus.sh; every message of both classes is text to model, the labels are unused.
// Words are tokenized by io::vocabulary (the --vocabulary most frequent training words, the rest <unk>); every
// message is cut into windows of --max-length tokens (at most --windows of them, from its start), and position t
// of a window is trained to predict token t+1 (nn::next_token_labels).
// Model: nn::make_language_model — token embedding, sinusoidal positions, dropout, N post-norm decoder layers with
// causal self-attention (GELU), and a linear head to the vocabulary at every position. The models share the
// embedding and head sizes: only the decoder layers differ. "mla" replaces the attention by eq. 2 of paper 003 with
// N = T, R = d/H and P = H superdiagonal block terms, under the causal mask (output i sums the pairs of tokens
// j, m ≤ i); its W_O has N²·d entries, so it has more parameters than std (the page states the counts).
// Training: AdamW + one-cycle + gradient clipping (nn::fit), losses and accuracies per predicted token, every model
// from --seeds seeds (default 3, quick 1), reported as mean ± sd.
//
//   language_model --data build/data/spam-assassin
//   language_model --quick                                     # CI: a small slice, about a minute on 2 cores
//   language_model --prompts "free money|the meeting is" --generate 30
//   language_model --device cuda ...                           # on the GPU (the default where there is one)
//
// Writes into --out: training_log.csv (loss = cross-entropy per token; exp(loss) is the perplexity),
// training_curves.png (test perplexity and training loss), samples.txt (the generated text), vocabulary.txt and
// checkpoints/<model>.safetensors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/text_data.hpp"
#include "support/token_windows.hpp"
#include "support/training_report.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "language_model";

using examples::token_windows;

/// @brief The first `max_windows` windows of `length` word ids of every document.
token_windows cut_windows(const std::vector<const io::text_example*>& docs, const io::vocabulary& vocab,
                          std::size_t length, std::size_t max_windows) {
  const auto words = [&](const io::text_example& d) {
    // The words' ids; encode pads after the last word, and no word maps to pad_id.
    const auto encoded = vocab.encode(d.text, length * max_windows);
    return std::vector<std::size_t>(encoded.begin(),
                                    std::find(encoded.begin(), encoded.end(), io::vocabulary::pad_id));
  };
  return examples::cut_windows(docs, words, length, max_windows, std::size_t(io::vocabulary::pad_id));
}

/// @brief One model of the comparison: p slices (1: the standard decoder under the identity; 4: the DCT), the
/// depth (0: the configured one), and whether its attention is multi-linear.
struct variant {
  std::string name;
  std::size_t slices = 1, layers = 0;
  bool multilinear = false;
};

std::vector<variant> parse_models(const std::string& list) {
  std::vector<variant> out;
  std::stringstream in(list);
  for (std::string n; std::getline(in, n, ',');) {
    if (n == "std")
      out.push_back({n, 1, 0, false});
    else if (n == "t4")
      out.push_back({n, 4, 0, false});
    else if (n == "std-1l")
      out.push_back({n, 1, 1, false});
    else if (n == "mla")
      out.push_back({n, 1, 0, true});
    else
      throw std::invalid_argument("--models: unknown model '" + n + "' (std, t4, std-1l, mla)");
  }
  if (out.empty()) throw std::invalid_argument("--models: no model named");
  return out;
}

struct run_setup {
  nn::language_model_config base;
  examples::fit_config fit;
  std::filesystem::path checkpoints;
  std::vector<std::string> prompts;  ///< generated from after training (first seed only)
  nn::generation_options generation;
  std::map<std::string, std::string> metadata;
  examples::device_kind device = examples::device_kind::cpu;  ///< where std, t4 and std-1l train (mla: the host)
};

/// @brief Trains, checkpoints, samples from and summarizes the model make_model(config) of variant v.
template <class MakeModel>
examples::model_summary train_variant(const variant& v, MakeModel&& make_model, const char* transform_name,
                                      const run_setup& setup, const io::vocabulary& vocab, const token_windows& train,
                                      const token_windows& test, examples::training_log& log, std::string& samples) {
  nn::language_model_config cfg = setup.base;
  cfg.slices = v.slices;
  if (v.layers) cfg.layers = v.layers;
  auto model = make_model(cfg);
  const auto r = examples::fit<float>(
      model, v.name, train.size(), [&](const auto& idx) { return train.batch(idx); }, test.size(),
      [&](const auto& idx) { return test.batch(idx); }, setup.fit, log);

  std::map<std::string, std::string> meta = setup.metadata;
  for (const auto& [k, x] : std::map<std::string, std::size_t>{{"vocabulary", cfg.vocabulary},
                                                               {"width", cfg.width},
                                                               {"heads", cfg.heads},
                                                               {"hidden", cfg.hidden},
                                                               {"layers", cfg.layers},
                                                               {"slices", cfg.slices}})
    meta[k] = std::to_string(x);
  meta["transform"] = transform_name;
  meta["attention"] = v.multilinear ? "multilinear" : "multihead";
  nn::save_checkpoint<float>(setup.checkpoints / (log.file_name(v.name) + ".safetensors"), model, meta);

  if (log.file_name(v.name) == v.name) {  // the first seed: text from every prompt
    for (const auto& prompt : setup.prompts) {
      std::vector<std::size_t> ids;
      io::for_each_word(prompt, [&](std::string_view w) { ids.push_back(std::size_t(vocab.id(w))); });
      if (ids.empty()) throw std::invalid_argument("--prompts: the prompt '" + prompt + "' has no word");
      auto g = setup.generation;
      g.seed = setup.fit.seed;
      const auto out = nn::generate<float>(model, ids, test.length, g);
      std::string text;
      for (std::size_t i = 0; i < out.size(); ++i)
        text +=
            (i ? " " : "") + std::string(i == ids.size() ? "| " : "") + vocab.token(io::vocabulary::id_type(out[i]));
      samples += v.name + ": " + text + "\n";
      std::printf("[%s] %s\n", v.name.c_str(), text.c_str());
    }
  }

  auto s =
      examples::summary_of(v.name, examples::parameter_count(model), examples::parameter_count(model, "decoder."), r);
  s.extra.update({{"slices", cfg.slices},
                  {"layers", cfg.layers},
                  {"transform", transform_name},
                  {"attention", v.multilinear ? "multilinear" : "multihead"},
                  {"test_perplexity", std::exp(r.test_loss)},
                  {"train_perplexity", std::exp(r.train_loss)}});
  return s;
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "A decoder-only language model on the corpus's messages: the standard decoder against the L-decoder with "
      "p = 4 (DCT), by held-out perplexity beside a unigram model's.",
      "build/data/spam-assassin",
      {{"models", "LIST  comma-separated: std, t4, std-1l, mla (default all four; quick std,t4)"},
       {"width", "D     model width d (default 128; quick 64)"},
       {"heads", "H     attention heads (default 4)"},
       {"hidden", "F    FFN width d_ff (default 4d)"},
       {"layers", "N    decoder layers (default 2)"},
       {"max-length", "T  tokens per window (default 64; quick 32)"},
       {"windows", "W   at most W windows from the start of every message (default 2)"},
       {"vocabulary", "V  the V most frequent training words, the rest <unk> (default 5000; quick 2000)"},
       {"batch", "B     batch size in windows (default 32)"},
       {"lr", "R        peak learning rate (default 2e-3; quick 3e-3)"},
       {"train-docs", "N  use at most N training messages (default 2000; quick 1200)"},
       {"test-docs", "N   use at most N test messages (default 500; quick 300)"},
       {"prompts", "P   '|'-separated prompts to continue after training (default: three)"},
       {"generate", "N  tokens generated per prompt (default 20)"},
       examples::device_option()});

  const bool quick = o.quick;
  nn::language_model_config base;
  base.width = o.count("width", quick ? 64 : 128);
  base.heads = o.count("heads", 4);
  base.hidden = o.count("hidden", 4.0 * double(base.width));
  base.layers = o.count("layers", 2);
  base.dropout = 0.1;
  base.seed = o.seed;
  const std::size_t length = o.count("max-length", quick ? 32 : 64), windows = o.count("windows", 2);
  examples::fit_config fc = examples::fit_defaults(o);
  fc.epochs = o.epochs.value_or(quick ? 7 : 5);
  fc.batch_size = o.count("batch", 32);
  fc.lr = o.number("lr", quick ? 3e-3 : 2e-3);
  fc.seed = o.seed;
  if (!(fc.lr > 0)) throw std::invalid_argument("--lr must be positive");
  fc.eval_train_limit = 1000;
  const auto variants = parse_models(o.extra.count("models") ? o.extra.at("models")
                                     : quick                 ? "std,t4"
                                                             : "std,t4,std-1l,mla");
  for (const auto& v : variants) nn::paper000_config(base.width, base.heads, base.hidden, v.slices);  // fail early
  const auto device = examples::device_choice(o);
  const bool with_mla = std::any_of(variants.begin(), variants.end(), [](const variant& v) { return v.multilinear; });
  if (with_mla && device == examples::device_kind::cuda && o.extra.count("device"))
    throw std::invalid_argument("--models mla: multi-linear attention trains on the host only; add --device cpu or "
                                "leave mla out of --models");
  if (with_mla && device == examples::device_kind::cuda)
    std::printf("%s: mla trains on the CPU (multi-linear attention has no device implementation)\n", example_name);

  run_setup setup{base, fc, o.out / "checkpoints", {}, {}, {{"example", example_name}}, device};
  std::stringstream prompts(o.extra.count("prompts") ? o.extra.at("prompts")
                                                     : "i think that|click here to|the new version of");
  for (std::string p; std::getline(prompts, p, '|');) setup.prompts.push_back(p);
  setup.generation.tokens = o.count("generate", 20);
  setup.generation.top_k = 10;
  setup.generation.excluded = {io::vocabulary::pad_id, io::vocabulary::unk_id};

  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  const auto docs = [&](const io::text_split& split, const char* key, std::size_t normal, std::size_t small,
                        std::uint64_t seed) {
    return examples::pick_documents(split, o.count(key, quick ? small : normal), seed);
  };
  const auto train_docs = docs(corpus.train, "train-docs", 2000, 1200, 11);
  const auto test_docs = docs(corpus.test, "test-docs", 500, 300, 12);
  const auto vocab = examples::vocabulary_of(train_docs, o.count("vocabulary", quick ? 2000 : 5000));
  vocab.save(o.out / "vocabulary.txt");
  setup.base.vocabulary = vocab.size();
  const auto train = cut_windows(train_docs, vocab, length, windows);
  const auto test = cut_windows(test_docs, vocab, length, windows);
  const auto train_targets = train.targets(), test_targets = test.targets();
  if (test_targets.empty()) throw std::invalid_argument("the test messages hold no window of two words");
  const double unigram =
      examples::unigram_perplexity(train_targets, test_targets, vocab.size(), std::size_t(io::vocabulary::pad_id));
  const double unk_share = double(std::count(test_targets.begin(), test_targets.end(), io::vocabulary::unk_id)) /
                           double(test_targets.size());
  std::printf(
      "%s: %zu training messages -> %zu windows, %zu predicted tokens; %zu test messages -> %zu windows, %zu "
      "tokens; vocabulary %zu (%.1f%% of the test tokens are <unk>); unigram test perplexity %.1f\n"
      "d = %zu, H = %zu, d_ff = %zu, %zu layers, T = %zu, batch %zu, peak lr %.1e, %zu epochs, seeds %llu.., "
      "%zu of them, %zu threads\n",
      example_name, train_docs.size(), train.size(), train_targets.size(), test_docs.size(), test.size(),
      test_targets.size(), vocab.size(), 100 * unk_share, unigram, base.width, base.heads, base.hidden, base.layers,
      length, fc.batch_size, fc.lr, fc.epochs, static_cast<unsigned long long>(o.seed), o.seeds, num_threads());

  std::filesystem::create_directories(setup.checkpoints);
  examples::training_log log(o.out / "training_log.csv");
  std::string samples;
  auto summaries = examples::over_seeds(o, log, [&](std::uint64_t seed) {
    run_setup run = setup;
    run.base.seed = run.fit.seed = seed;
    std::vector<examples::model_summary> models;
    for (const auto& v : variants) {
      // The decoder models train in the chosen memory space (their checkpoints are the same files from either);
      // multi-linear attention on the host.
      const auto in_chosen_space = [&](const char* transform_name, auto make) {
        return examples::with_device(run.device, [&](auto space) {
          const auto make_model = [&](const nn::language_model_config& c) { return make(c, space); };
          return train_variant(v, make_model, transform_name, run, vocab, train, test, log, samples);
        });
      };
      const auto standard = [](const nn::language_model_config& c, auto space) {
        return nn::make_language_model<float>(c, identity_transform{}, space);
      };
      const auto l_decoder = [](const nn::language_model_config& c, auto space) {
        return nn::make_language_model<float>(c, dct{}, space);
      };
      const auto multilinear = [&](const nn::language_model_config& c) {  // N = T, R = d/H, P = H
        const auto cfg = nn::paper000_config(c.width, c.heads, c.hidden, 1, c.act);
        std::vector<
            nn::encoder_params<float, identity_transform, nn::multilinear_attention_params<float, identity_transform>>>
            layers;
        for (std::size_t i = 0; i < c.layers; ++i)
          layers.push_back(nn::make_encoder_params_with<float>(
              cfg, identity_transform{}, c.seed + 100 + 1000 * i,
              nn::make_multilinear_attention_params<float>(c.width, length, c.width / c.heads, c.heads, 1,
                                                           identity_transform{}, c.seed + 100 + 1000 * i)));
        return nn::make_language_model<float>(c, std::move(layers));
      };
      models.push_back(v.multilinear ? train_variant(v, multilinear, "identity", run, vocab, train, test, log, samples)
                       : v.slices == 1 ? in_chosen_space("identity", standard)
                                       : in_chosen_space("dct", l_decoder));
    }
    return models;
  });
  examples::write_whole_file(o.out / "samples.txt", samples);
  examples::plot_training_curves(log, o.out / "training_curves.png",
                                 "decoder-only language model on " + o.data.filename().string() +
                                     ": Std vs T4 (p = 4, DCT); unigram perplexity " + std::to_string(int(unigram)),
                                 examples::test_curve::perplexity);

  std::printf("\n%-8s %10s %10s %12s %12s %10s %10s\n", "model", "params", "decoder", "test ppl", "token acc",
              "train ppl", "s/epoch");
  for (const auto& s : summaries)
    std::printf("%-8s %10zu %10zu %12.1f %11.2f%% %10.1f %10.1f\n", s.name.c_str(), s.parameters, s.encoder_parameters,
                s.extra["test_perplexity"].get<double>(), 100 * s.test_accuracy,
                s.extra["train_perplexity"].get<double>(), s.seconds_per_epoch);
  std::printf("%-8s %10zu %10s %12.1f  (add-one smoothed, fitted to the training tokens)\n", "unigram",
              vocab.size() - 1, "-", unigram);
  if (o.summary) {
    const nlohmann::json extra = {{"data", o.data.string()},
                                  {"train_documents", train_docs.size()},
                                  {"test_documents", test_docs.size()},
                                  {"train_tokens", train_targets.size()},
                                  {"test_tokens", test_targets.size()},
                                  {"test_unk_share", unk_share},
                                  {"unigram_perplexity", unigram},
                                  {"vocabulary", vocab.size()},
                                  {"width", base.width},
                                  {"heads", base.heads},
                                  {"hidden", base.hidden},
                                  {"layers", base.layers},
                                  {"max_length", length},
                                  {"windows", windows},
                                  {"epochs", fc.epochs},
                                  {"batch", fc.batch_size},
                                  {"lr", fc.lr},
                                  {"first_seed", o.seed},
                                  {"seeds", o.seeds},
                                  {"threads", num_threads()},
                                  {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}};
    // The "majority class" of next-token prediction: always answering the most frequent test target.
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test_targets), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
