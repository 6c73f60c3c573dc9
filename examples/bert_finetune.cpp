// SPDX-License-Identifier: Apache-2.0
// bert_finetune: paper 003 on a BERT — a small BERT pre-trained here with BERT's masked-language-model objective,
// written as a Hugging Face BertForMaskedLM folder, then fine-tuned from that folder on the corpus's classification
// task, plainly, with paper 003's over-parameterization of its most important matrices as exact MPOs, and with the
// Tensorized Transformer's multi-linear attention in place of the pre-trained multi-head attention.
//
// Data: the SpamAssassin corpus (ROOT/{train,test}/{ham,spam}/*.txt, scripts/make-text-corpus.sh), tokenized by
// BERT's WordPiece (--tokenizer DIR holding vocab.txt; default build/data/bert-vocabulary, bert-base-uncased's, from
// scripts/get-bert-vocabulary.sh): [CLS] the message's first T − 2 pieces [SEP], padded with [PAD].
// The model trained here keeps the --vocabulary most frequent pieces of the training messages (the specials first)
// and reads the others as [UNK]; its folder holds that vocab.txt, so it is a complete BERT checkpoint.
// Per seed:
//   pre-training  BertForMaskedLM (d = 64, 4 heads, 2 post-norm layers, d_ff = 4d; quick d = 32) on the first
//                 --pretrain-docs training messages: 15 % of each message's pieces are chosen (at least one per
//                 batch); a chosen piece is replaced by [MASK] 80 % of the time, by a random piece 10 %, kept 10 %,
//                 and predicted from the rest (the loss on the chosen pieces only); fresh masks every batch;
//   scratch       the control: the same classifier with a random encoder (no pre-training), fine-tuned as plain;
//   plain         BertForSequenceClassification read from the pre-trained folder (the pooler and classifier drawn
//                 fresh, as transformers draws them) and fine-tuned on the next --finetune-docs messages;
//   mpo-K         the same start, the top --top matrices of every module group by I_W (of the plain fine-tuned
//                 model, over one pass of the fine-tuning data) trained as exact MPOs of K cores, then merged back;
//   multilinear   the same start with every layer's attention replaced by multi-linear attention (P block terms of
//                 rank R over the T tokens, superdiagonal cores; nn::with_multilinear_attention): Q', K', V' start
//                 as the first R columns of the pre-trained query, key and value projections, the cores and the
//                 T²×d output projection fresh; everything else pre-trained, all of it fine-tuned.
// With --model DIR the pre-training is skipped: DIR is the user's BERT folder (config.json, model.safetensors,
// vocab.txt), read as BertForSequenceClassification (a head it lacks drawn fresh).
//
//   bert_finetune --data build/data/spam-assassin
//   bert_finetune --data build/data/spam-assassin --model path/to/bert-base-uncased --width 768
//
// Writes into --out: training_log.csv, training_curves.png, checkpoints/seed-<s>/{pretrained,plain,mpo-K}/ (Hugging
// Face folders: config.json, model.safetensors, vocab.txt) and checkpoints/seed-<s>/multilinear.safetensors (tprod's
// names: no published architecture has multi-linear attention).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/mpo_strategy.hpp"
#include "support/text_data.hpp"
#include "support/training_report.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/wordpiece_tokenizer.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/bert.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"
#include "tprod/nn/model/multilinear_encoder.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "bert_finetune";
using classifier = nn::bert_classifier<float>;
constexpr const char* specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

/// The masked-LM batches of a split (see the file comment). Positions 1 … length − 2 of every message are its
/// pieces; [CLS], [SEP] and the padding are never chosen. Training batches draw fresh masks from (seed, call);
/// `fixed` draws them from the batch's first index, so that every evaluation masks the test messages alike.
struct masked_batches {
  const examples::encoded_split* split;
  std::size_t vocabulary, mask_id, first_piece;  // random replacements come from [first_piece, vocabulary)
  std::uint64_t seed;
  bool fixed;
  std::uint64_t calls = 0;

  nn::labelled_batch<float> operator()(const std::vector<std::size_t>& idx) {
    auto b = split->batch(idx);
    std::mt19937_64 rng(seed * 1000003 + (fixed ? idx.front() : calls++));
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<std::size_t> piece(first_piece, vocabulary - 1);
    const std::size_t t = split->length;
    b.labels.assign(b.info.tokens.size(), nn::ignore_label);
    bool any = false;
    for (std::size_t s = 0; s < idx.size(); ++s)
      for (std::size_t pos = 1; pos + 1 < b.info.lengths[s]; ++pos) {
        if (u(rng) >= 0.15) continue;
        auto& token = b.info.tokens[s * t + pos];
        b.labels[s * t + pos] = token;
        any = true;
        const double r = u(rng);
        token = r < 0.8 ? mask_id : r < 0.9 ? piece(rng) : token;
      }
    if (!any && b.info.lengths[0] > 2) {  // a batch of tiny messages: predict one piece rather than none
      b.labels[1] = b.info.tokens[1];
      b.info.tokens[1] = mask_id;
    }
    return b;
  }
};

/// The messages as [CLS] pieces [SEP] + padding, in the model's ids (`ids[tokenizer id]`).
examples::encoded_split encode(const std::vector<const io::text_example*>& docs,
                               const std::map<const io::text_example*, std::vector<std::size_t>>& pieces,
                               const std::vector<std::size_t>& ids, std::size_t length, std::size_t cls,
                               std::size_t sep, std::size_t pad) {
  examples::encoded_split s;
  s.length = length;
  for (const auto* doc : docs) {
    std::vector<std::size_t> row{cls};
    for (std::size_t id : pieces.at(doc)) row.push_back(ids[id]);
    row.push_back(sep);
    s.lengths.push_back(row.size());
    row.resize(length, pad);
    s.tokens.insert(s.tokens.end(), row.begin(), row.end());
    s.labels.push_back(doc->label);
  }
  return s;
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 003 on a BERT: masked-LM pre-training here (or --model DIR), then plain, MPO and multi-linear "
      "attention fine-tuning.",
      "build/data/spam-assassin",
      {{"tokenizer", "DIR   a folder with BERT's vocab.txt (default build/data/bert-vocabulary)"},
       {"model", "DIR       a BERT checkpoint folder of your own instead of pre-training one here"},
       {"vocabulary", "N    pieces the model trained here keeps (default 6000; quick 2000)"},
       {"width", "D         model width d (default 64; quick 32)"},
       {"layers", "N        encoder layers (default 2)"},
       {"max-length", "T    pieces per message with [CLS] and [SEP] (default 64; quick 48)"},
       {"pretrain-docs", "N training messages for pre-training (default 2800; quick 1000)"},
       {"finetune-docs", "N the next N for fine-tuning (default 2000; quick 1000)"},
       {"test-docs", "N     test messages (default all; quick 400)"},
       {"pretrain-epochs", "E (default 6; quick 2)"},
       {"pretrain-lr", "R   peak learning rate of pre-training (default 2e-3; quick 3e-3)"},
       {"top", "N           matrices over-parameterized per module group (default 1)"},
       {"cores", "LIST      MPO cores per matrix, one fine-tuning per entry (default 3; e.g. 3,5)"},
       {"rank", "R          rank of the multi-linear attention's Q', K', V' (default d: all of the pre-trained "
                "projections; 0 skips the model)"},
       {"terms", "P         block terms of the multi-linear attention (default the heads, 4)"},
       {"lr", "R            peak learning rate of fine-tuning (default 1e-3; quick 2e-3)"}});
  const bool quick = o.quick;
  const std::filesystem::path vocabulary_folder =
      o.extra.count("model") ? std::filesystem::path(o.extra.at("model"))
                             : std::filesystem::path(o.extra.count("tokenizer") ? o.extra.at("tokenizer")
                                                                                : "build/data/bert-vocabulary");
  const auto tokenizer = io::wordpiece_tokenizer::from_folder(vocabulary_folder);
  const bool own_model = o.extra.count("model") != 0;
  const std::size_t length = o.count("max-length", quick ? 48 : 64), top = o.count("top", 1);
  if (length < 3) throw std::invalid_argument("--max-length must leave room for [CLS], a piece and [SEP]");
  const auto core_counts = examples::core_counts(o, "3");
  examples::fit_config pre_fit = examples::fit_defaults(o), fine_fit = examples::fit_defaults(o);
  pre_fit.epochs = o.count("pretrain-epochs", quick ? 2 : 6);
  pre_fit.lr = o.number("pretrain-lr", quick ? 3e-3 : 2e-3);
  fine_fit.epochs = o.epochs.value_or(3);
  fine_fit.lr = o.number("lr", quick ? 2e-3 : 1e-3);
  if (!(fine_fit.lr > 0) || !(pre_fit.lr > 0)) throw std::invalid_argument("--lr and --pretrain-lr must be positive");
  pre_fit.eval_train_limit = fine_fit.eval_train_limit = 1000;

  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  const std::size_t n_pre = own_model ? 0 : o.count("pretrain-docs", quick ? 1000 : 2800);
  const std::size_t n_fine = o.count("finetune-docs", quick ? 1000 : 2000);
  const auto docs = examples::pick_documents(corpus.train, n_pre + n_fine, 11);
  if (docs.size() < n_pre + n_fine)
    throw std::invalid_argument("--pretrain-docs + --finetune-docs = " + std::to_string(n_pre + n_fine) +
                                " but the training split has " + std::to_string(docs.size()) + " documents");
  const std::vector<const io::text_example*> pre_docs(docs.begin(), docs.begin() + std::ptrdiff_t(n_pre));
  const std::vector<const io::text_example*> fine_docs(docs.begin() + std::ptrdiff_t(n_pre), docs.end());
  const auto test_docs =
      examples::pick_documents(corpus.test, o.extra.count("test-docs") ? o.count("test-docs", 0) : quick ? 400 : 0, 12);
  // Every message's first T − 2 pieces, from a prefix cut at a space (a piece is at least one character).
  std::map<const io::text_example*, std::vector<std::size_t>> pieces;
  for (const auto* split : {&docs, &test_docs})
    for (const auto* doc : *split) {
      std::string_view text(doc->text);
      if (text.size() > 24 * length) text = text.substr(0, text.rfind(' ', 24 * length));
      auto ids = tokenizer.ids(text);
      ids.resize(std::min(ids.size(), length - 2));
      pieces[doc] = std::move(ids);
    }

  // The model's ids: the tokenizer's (a checkpoint of your own), or the specials and the most frequent pieces.
  nn::bert_config cfg;
  std::vector<std::size_t> ids(tokenizer.size());
  std::vector<std::string> kept;  // the model's vocab.txt, when trained here
  if (own_model) {
    cfg = nn::read_bert_config(vocabulary_folder / "config.json");
    std::iota(ids.begin(), ids.end(), std::size_t(0));
  } else {
    std::vector<std::size_t> count(tokenizer.size()), order(tokenizer.size());
    for (const auto* doc : docs)
      for (auto id : pieces[doc]) ++count[id];
    for (const char* s : specials) count[tokenizer.id(s)] = 0;
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return count[a] > count[b]; });
    const std::size_t size = std::min(o.count("vocabulary", quick ? 2000 : 6000), tokenizer.size());
    if (size <= std::size(specials)) throw std::invalid_argument("--vocabulary must be more than the 5 specials");
    std::fill(ids.begin(), ids.end(), std::size_t(1));  // [UNK]
    for (const char* s : specials) {
      ids[tokenizer.id(s)] = kept.size();
      kept.push_back(s);
    }
    for (std::size_t rank = 0; kept.size() < size; ++rank) {
      ids[order[rank]] = kept.size();
      kept.push_back(tokenizer.token(order[rank]));
    }
    cfg.vocabulary = kept.size();
    cfg.width = o.count("width", quick ? 32 : 64);
    cfg.heads = 4;
    cfg.hidden = 4 * cfg.width;
    cfg.layers = o.count("layers", 2);
    cfg.positions = length;
  }
  cfg.labels = corpus.labels().size();
  const std::size_t rank = o.count("rank", double(cfg.width)), terms = o.count("terms", double(cfg.heads));
  if (rank > cfg.width)
    throw std::invalid_argument("--rank " + std::to_string(rank) + " is more than the model's width " +
                                std::to_string(cfg.width));
  if (cfg.positions < length)
    throw std::invalid_argument("--max-length " + std::to_string(length) + " is more than the model's " +
                                std::to_string(cfg.positions) + " positions");
  const std::size_t cls = ids[tokenizer.id("[CLS]")], sep = ids[tokenizer.id("[SEP]")], pad = ids[tokenizer.id("[PAD]")];
  const auto pre = encode(pre_docs, pieces, ids, length, cls, sep, pad);
  const auto fine = encode(fine_docs, pieces, ids, length, cls, sep, pad);
  const auto test = encode(test_docs, pieces, ids, length, cls, sep, pad);
  std::printf("%s: d = %zu, H = %zu, d_ff = %zu, %zu layers, T = %zu; %zu pre-training, %zu fine-tuning and %zu test "
              "messages, WordPiece, the model's %zu ids, %zu threads\n",
              example_name, cfg.width, cfg.heads, cfg.hidden, cfg.layers, length, pre.size(), fine.size(),
              test.size(), cfg.vocabulary, num_threads());

  const auto batches = [](const examples::encoded_split& s) {
    return [&s](const std::vector<std::size_t>& idx) { return s.batch(idx); };
  };
  examples::training_log log(o.out / "training_log.csv");
  const auto comparison = [&](std::uint64_t seed) {
    examples::fit_config pre_run = pre_fit, fine_run = fine_fit;
    pre_run.seed = seed;
    fine_run.seed = seed + 1;
    const auto folder = o.out / "checkpoints" / ("seed-" + std::to_string(seed));
    std::vector<examples::model_summary> summaries;
    const auto save = [&](const std::string& name, auto& model) {
      nn::save_bert<float>(folder / name, model, cfg);
      if (kept.empty()) {  // a checkpoint of your own: its tokenizer files go along
        for (const char* file : {"vocab.txt", "tokenizer_config.json"})
          if (std::filesystem::exists(vocabulary_folder / file))
            std::filesystem::copy_file(vocabulary_folder / file, folder / name / file,
                                       std::filesystem::copy_options::overwrite_existing);
        return;
      }
      std::string text;
      for (const auto& t : kept) text += t + "\n";
      examples::write_whole_file(folder / name / "vocab.txt", text);
      examples::write_whole_file(folder / name / "tokenizer_config.json",
                                 std::string("{\"do_lower_case\": ") + (tokenizer.lower_case() ? "true" : "false") + "}\n");
    };

    // Pre-training: the masked-LM objective on the pre-training messages; its folder is every fine-tuning's start.
    std::filesystem::path start = vocabulary_folder;
    double masked_accuracy = 0, masked_loss = 0;
    if (!own_model) {
      auto mlm = nn::make_bert_masked_lm<float>(cfg, seed);
      const std::size_t mask = ids[tokenizer.id("[MASK]")];
      masked_batches train{&pre, cfg.vocabulary, mask, std::size(specials), seed, false};
      masked_batches held_out{&test, cfg.vocabulary, mask, std::size(specials), seed, true};
      const auto r = examples::fit<float>(mlm, "pretrain-mlm", pre.size(), std::ref(train), test.size(),
                                          std::ref(held_out), pre_run, log);
      masked_accuracy = r.test_accuracy;
      masked_loss = r.test_loss;
      std::printf("pre-training: masked pieces of the test messages predicted %.1f%%, loss %.3f\n",
                  100 * masked_accuracy, masked_loss);
      save("pretrained", mlm);
      start = folder / "pretrained";
    }
    const auto from_start = [&] {
      auto loaded = nn::load_bert_classifier<float>(start, seed + 2);
      if (loaded.config.labels != cfg.labels)
        throw std::invalid_argument(start.string() + " classifies into " + std::to_string(loaded.config.labels) +
                                    " labels; the corpus has " + std::to_string(cfg.labels));
      return std::move(loaded.model);
    };
    const auto summarize = [&](const std::string& name, auto& trained, const examples::fit_result& r) {
      auto s = examples::summary_of(name, examples::parameter_count(trained),
                                    examples::parameter_count(trained, "encoder."), r);
      s.extra["pretrain_masked_accuracy"] = masked_accuracy;
      s.extra["pretrain_masked_loss"] = masked_loss;
      return s;
    };

    // The control: the same classifier from a random encoder (no pre-training), fine-tuned alike.
    if (!own_model) {
      auto scratch = nn::make_bert_classifier<float>(cfg, seed + 2);
      const auto r = examples::fit<float>(scratch, "scratch", fine.size(), batches(fine), test.size(), batches(test),
                                          fine_run, log);
      summaries.push_back(summarize("scratch", scratch, r));
    }

    auto plain = from_start();
    const auto r_plain =
        examples::fit<float>(plain, "plain", fine.size(), batches(fine), test.size(), batches(test), fine_run, log);
    summaries.push_back(summarize("plain", plain, r_plain));
    save("plain", plain);
    const auto selected = examples::static_mpo_selection<float>(plain, fine, fine_run.batch_size, top);

    for (const std::size_t order : core_counts) {
      const std::string name = "mpo-" + std::to_string(order);
      auto base = from_start();
      nn::mpo_overparameterized<float, classifier> over(base);
      std::printf("\n%s:\n", name.c_str());
      const std::size_t replaced = examples::over_parameterize_all(over, selected, order);
      const auto r =
          examples::fit<float>(over, name, fine.size(), batches(fine), test.size(), batches(test), fine_run, log);
      auto s = summarize(name, over, r);
      s.extra["cores"] = order;
      s.extra["dense_entries_replaced"] = replaced;
      s.extra["core_entries"] = over.core_parameter_count();
      summaries.push_back(s);
      save(name, over.merged());
    }

    if (rank > 0) {
      auto multilinear = nn::with_layer_replaced<5>(from_start(), [&](auto&& encoder) {
        return nn::with_multilinear_attention(std::move(encoder), length, rank, terms, seed + 5);
      });
      std::printf("\nmultilinear: %zu block terms of rank %zu over %zu tokens in each of %zu layers\n", terms, rank,
                  length, cfg.layers);
      const auto r = examples::fit<float>(multilinear, "multilinear", fine.size(), batches(fine), test.size(),
                                          batches(test), fine_run, log);
      auto s = summarize("multilinear", multilinear, r);
      s.extra["rank"] = rank;
      s.extra["terms"] = terms;
      summaries.push_back(s);
      nn::save_checkpoint<float>(folder / "multilinear.safetensors", multilinear,
                                 {{"rank", std::to_string(rank)}, {"terms", std::to_string(terms)}});
    }
    return summaries;
  };
  const auto summaries = examples::over_seeds(o, log, comparison);

  examples::plot_training_curves(log, o.out / "training_curves.png",
                                 "paper 003 on a BERT, " + o.data.filename().string() + ": plain, MPO and multi-linear fine-tuning");
  examples::print_models(summaries);
  if (o.summary) {
    const nlohmann::json extra = {
        {"data", o.data.string()},         {"pretrain_documents", pre.size()}, {"finetune_documents", fine.size()},
        {"test_documents", test.size()},   {"vocabulary", cfg.vocabulary},     {"width", cfg.width},
        {"layers", cfg.layers},            {"max_length", length},             {"pretrain_epochs", pre_fit.epochs},
        {"finetune_epochs", fine_fit.epochs}, {"finetune_lr", fine_fit.lr},    {"top_per_group", top},
        {"cores", core_counts},            {"rank", rank},                     {"terms", terms},
        {"own_model", own_model},           {"first_seed", o.seed},
        {"seeds", o.seeds},                {"threads", num_threads()}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test.labels), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
