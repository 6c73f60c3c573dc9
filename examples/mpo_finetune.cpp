// SPDX-License-Identifier: Apache-2.0
// mpo_finetune: paper 003's over-parameterization framework — fine-tuning a small pre-trained Transformer with
// its most important weight matrices replaced by exact matrix product operators (more trainable parameters, the
// same function), merged back into dense matrices for inference.
//
// Data: the SpamAssassin corpus (ROOT/{train,test}/{ham,spam}/*.txt, scripts/make-text-corpus.sh). The corpus is
// one task, so "pre-training" and "fine-tuning" are two disjoint parts of its shuffled training split: a small
// standard text classifier is pre-trained briefly on the first part, then fine-tuned on the second part from the
// same checkpoint with the same batches, schedule and steps:
//   plain  every parameter trained as it is;
//   mpo-K  static strategy: I_W = Σ_b Σ_ij |w_ij ∂L_b/∂w_ij| of every encoder and head matrix of the plain
//          fine-tuned model, accumulated over one pass of the fine-tuning data, ranks the matrices per module group
//          (encoder.*.attn.w_qkv, …); the top-N of each group (--top, default 1) become exact MPOs of K cores
//          (TT-SVD at full ranks; K = 3 and 5 by default), whose cores are fine-tuned from the pre-trained weights;
//   mpo-dyn-K  dynamic strategy: fine-tuning starts dense; every --select-every steps I_W of the matrices still
//          dense, over the gradients of those steps, picks the top --at-once of every group that has fewer than --top
//          (nn::select_next), which become MPOs of K cores from then on (nn::fit's after_step rebuilds the parameter
//          list and AdamW); the rest of the schedule trains them.
// Model: nn::make_text_classifier, p = 1 under the identity (the standard Transformer): d = 64, H = 4, d_ff = 256,
// 2 post-norm layers, T = 64 tokens (quick: d = 32, d_ff = 128, T = 48 on 2,000 + 1,000 documents).
//
// Every model trains on the CPU or the GPU (--device cpu|cuda; the GPU by default where there is one).
//
//   mpo_finetune --data build/data/spam-assassin
//   mpo_finetune --data build/data/spam-assassin --top 2 --cores 4 [--device cpu|cuda]
//
// Writes into --out: training_log.csv, training_curves.png, vocabulary.txt, checkpoints/{pretrained,plain,mpo-N}
// .safetensors (the MPO models merged back to dense: the same shapes as the others).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "support/seeds.hpp"
#include "support/mpo_strategy.hpp"
#include "support/text_data.hpp"
#include "support/training_report.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

using namespace tprod;
constexpr const char* example_name = "mpo_finetune";

/// @brief The summary row of a model: trainable parameters while it was trained, the encoder's share of them.
template <class Model>
examples::model_summary summarize(const std::string& name, Model& trained, const examples::fit_result& r) {
  return examples::summary_of(name, examples::parameter_count(trained), examples::parameter_count(trained, "encoder."),
                              r);
}

int run(int argc, char** argv) {
  const auto o = examples::parse_options(
      argc, argv, example_name,
      "Paper 003: over-parameterized fine-tuning with MPOs (static and dynamic strategies) against plain fine-tuning.",
      "build/data/spam-assassin",
      {{"width", "D         model width d (default 64; quick 32)"},
       {"layers", "N        encoder layers (default 2)"},
       {"max-length", "T    tokens per document (default 64; quick 48)"},
       {"pretrain-docs", "N documents of the training split for pre-training (default 800; quick 2000)"},
       {"finetune-docs", "N the next N for fine-tuning (default 3000; quick 1000)"},
       {"test-docs", "N     test documents (default all; quick 400)"},
       {"pretrain-epochs", "E (default 3)"},
       {"top", "N           matrices over-parameterized per module group (default 1)"},
       {"select-every", "T  dynamic strategy: steps between selection rounds (default 30; quick 10)"},
       {"at-once", "n       dynamic strategy: matrices added per group and round (default 1)"},
       {"cores", "LIST      MPO cores per matrix, one fine-tuning per entry (default 3,5; quick 3)"},
       {"lr", "R            peak learning rate of fine-tuning (default 5e-4; pre-training 1e-3)"},
       examples::device_option()});
  const auto device = examples::device_choice(o);
  const bool quick = o.quick;
  nn::text_classifier_config cfg;
  cfg.width = o.count("width", quick ? 32 : 64);
  cfg.heads = 4;
  cfg.hidden = 4 * cfg.width;
  cfg.layers = o.count("layers", 2);
  cfg.dropout = 0.1;
  const std::size_t max_length = o.count("max-length", quick ? 48 : 64);
  const std::size_t top = o.count("top", 1);
  const std::size_t select_every = o.count("select-every", quick ? 10 : 30), at_once = o.count("at-once", 1);
  if (top == 0 || select_every == 0 || at_once == 0)
    throw std::invalid_argument("--top, --select-every and --at-once must be at least 1");
  const auto core_counts = examples::core_counts(o, quick ? "3" : "3,5");
  examples::fit_config pre_fit = examples::fit_defaults(o), fine_fit = examples::fit_defaults(o);
  pre_fit.epochs = o.count("pretrain-epochs", 3);
  pre_fit.lr = quick ? 3e-3 : 1e-3;  // quick: few steps, so a higher peak
  fine_fit.epochs = o.epochs.value_or(quick ? 2 : 3);
  fine_fit.lr = o.number("lr", 5e-4);
  if (!(fine_fit.lr > 0)) throw std::invalid_argument("--lr must be positive");
  pre_fit.eval_train_limit = fine_fit.eval_train_limit = 1000;

  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  const std::size_t n_pre = o.count("pretrain-docs", quick ? 2000 : 800);
  const std::size_t n_fine = o.count("finetune-docs", quick ? 1000 : 3000);
  const auto docs = examples::pick_documents(corpus.train, n_pre + n_fine, 11);
  if (docs.size() < n_pre + n_fine)
    throw std::invalid_argument("--pretrain-docs + --finetune-docs = " + std::to_string(n_pre + n_fine) +
                                " but the training split has " + std::to_string(docs.size()) + " documents");
  const std::vector<const io::text_example*> pre_docs(docs.begin(), docs.begin() + std::ptrdiff_t(n_pre));
  const std::vector<const io::text_example*> fine_docs(docs.begin() + std::ptrdiff_t(n_pre), docs.end());
  const auto test_docs =
      examples::pick_documents(corpus.test, o.extra.count("test-docs") ? o.count("test-docs", 0) : quick ? 400 : 0, 12);
  const auto vocab = examples::vocabulary_of(docs);
  vocab.save(o.out / "vocabulary.txt");
  const auto pre = examples::encode_documents(pre_docs, vocab, max_length);
  const auto fine = examples::encode_documents(fine_docs, vocab, max_length);
  const auto test = examples::encode_documents(test_docs, vocab, max_length);
  cfg.vocabulary = vocab.size();
  cfg.classes = corpus.labels().size();
  std::printf("%s: d = %zu, H = %zu, d_ff = %zu, %zu layers, T = %zu; %zu pre-training, %zu fine-tuning and %zu test "
              "documents, vocabulary %zu, %zu threads\n",
              example_name, cfg.width, cfg.heads, cfg.hidden, cfg.layers, max_length, pre.size(), fine.size(),
              test.size(), vocab.size(), num_threads());

  const auto batches = [](const examples::encoded_split& s) {
    return [&s](const std::vector<std::size_t>& idx) { return s.batch(idx); };
  };
  const auto checkpoints = o.out / "checkpoints";
  std::filesystem::create_directories(checkpoints);
  examples::training_log log(o.out / "training_log.csv");
  // One seed's comparison: the pre-training, plain fine-tuning and every MPO fine-tuning from that seed (the models'
  // initialisation and dropout, and the batch order: pre-training from the seed, fine-tuning from seed + 1).
  const auto comparison = [&](std::uint64_t seed) {
    return examples::with_device(device, [&](auto space) {
      using S = decltype(space);
      nn::text_classifier_config seeded = cfg;
      seeded.seed = seed;
      examples::fit_config pre_run = pre_fit, fine_run = fine_fit;
      pre_run.seed = seed;
      fine_run.seed = seed + 1;
      auto meta = nn::to_metadata(seeded);
      meta.insert({{"example", example_name}, {"max_length", std::to_string(max_length)}, {"transform", "identity"}});
      std::vector<examples::model_summary> summaries;

      // Pre-training on the first part; every fine-tuning starts from this checkpoint.
      auto pretrained = nn::make_text_classifier<float>(seeded, identity_transform{}, space);
      const auto r_pre = examples::fit<float>(pretrained, "pretrained", pre.size(), batches(pre), test.size(),
                                              batches(test), pre_run, log);
      summaries.push_back(summarize("pretrained", pretrained, r_pre));
      nn::save_checkpoint<float>(checkpoints / (log.file_name("pretrained") + ".safetensors"), pretrained, meta);
      const auto from_pretrained = [&] {
        auto m = nn::make_text_classifier<float>(seeded, identity_transform{}, space);
        nn::load_checkpoint<float>(checkpoints / (log.file_name("pretrained") + ".safetensors"), m);
        return m;
      };

      // Plain fine-tuning, then I_W of its matrices over one more pass of the fine-tuning data (gradients only).
      auto plain = from_pretrained();
      const auto r_plain =
          examples::fit<float>(plain, "plain", fine.size(), batches(fine), test.size(), batches(test), fine_run, log);
      summaries.push_back(summarize("plain", plain, r_plain));
      nn::save_checkpoint<float>(checkpoints / (log.file_name("plain") + ".safetensors"), plain, meta);
      const auto selected = examples::static_mpo_selection<float>(plain, fine, fine_run.batch_size, top);

      // An MPO fine-tuning's summary row and its checkpoint (merged back to dense).
      const auto record = [&](const std::string& name, std::size_t order, auto& over, auto& base, std::size_t replaced,
                              const examples::fit_result& r) {
        auto s = summarize(name, over, r);
        s.extra["cores"] = order;
        s.extra["over_parameterized"] = over.over_parameterized();
        s.extra["dense_entries_replaced"] = replaced;
        s.extra["core_entries"] = over.core_parameter_count();
        s.extra["inference_parameters"] = nn::parameters<float>(base).count();
        nn::save_checkpoint<float>(checkpoints / (log.file_name(name) + ".safetensors"), over.merged(), meta);
        summaries.push_back(s);
      };

      // MPO fine-tuning of the selected matrices from the same checkpoint, same batches and schedule, once per number
      // of cores (more cores: larger middle bond ranks, more parameters).
      for (const std::size_t order : core_counts) {
        const std::string name = "mpo-" + std::to_string(order);
        auto base = from_pretrained();
        nn::mpo_overparameterized<float, decltype(base)> over(base);
        std::printf("\n%s:\n", name.c_str());
        const std::size_t replaced = examples::over_parameterize_all(over, selected, order);
        record(name, order, over, base, replaced,
               examples::fit<float>(over, name, fine.size(), batches(fine), test.size(), batches(test), fine_run, log));
      }

      // The dynamic strategy from the same checkpoint, batches and schedule: the gradients of the training steps
      // themselves (after clipping) score the matrices still dense, and each round's picks become MPOs at once.
      for (const std::size_t order : core_counts) {
        const std::string name = "mpo-dyn-" + std::to_string(order);
        auto base = from_pretrained();
        nn::mpo_overparameterized<float, decltype(base)> over(base);
        const auto dense_candidates = [&] {
          auto names = over.dense_weight_matrices();
          std::erase(names, std::string("embed.table"));
          return names;
        };
        std::optional<nn::importance_meter<float, S>> meter(std::in_place, over, dense_candidates());
        std::set<std::string> chosen;
        bool full = false;
        std::size_t replaced = 0;
        std::printf("\n%s: a selection round every %zu steps, %zu per group at once, up to %zu per group\n",
                    name.c_str(), select_every, at_once, top);
        examples::fit_config run = fine_run;
        run.state_directory.clear();  // the parameter list changes as it trains: no state to resume from
        run.after_step = [&](std::size_t step) {
          if (full) return false;
          meter->accumulate();
          if (step % select_every != 0) return false;
          const auto next = nn::select_next(meter->scores(), chosen, top, at_once);
          for (const auto& matrix : next) {
            over.over_parameterize(matrix, std::nullopt, order);
            chosen.insert(matrix);
            const auto& w = over.weight(matrix);
            replaced += w.rows() * w.cols();
            std::printf("  step %zu: %s becomes %zu core entries\n", step, matrix.c_str(), w.parameter_count());
          }
          full = nn::select_next(meter->scores(), chosen, top, top).empty();
          meter.emplace(over, dense_candidates());
          return !next.empty();
        };
        record(name, order, over, base, replaced,
               examples::fit<float>(over, name, fine.size(), batches(fine), test.size(), batches(test), run, log));
      }
      return summaries;
    });
  };
  const auto summaries = examples::over_seeds(o, log, comparison);

  examples::plot_training_curves(log, o.out / "training_curves.png",
                                 "paper 003 on " + o.data.filename().string() + ": plain vs MPO fine-tuning");
  examples::print_models(summaries);
  if (o.summary) {
    const nlohmann::json extra = {
        {"data", o.data.string()},          {"pretrain_documents", pre.size()}, {"finetune_documents", fine.size()},
        {"test_documents", test.size()},    {"vocabulary", vocab.size()},       {"width", cfg.width},
        {"layers", cfg.layers},             {"max_length", max_length},         {"finetune_epochs", fine_fit.epochs},
        {"finetune_lr", fine_fit.lr},       {"top_per_group", top},             {"cores", core_counts},
        {"select_every", select_every},     {"at_once", at_once},
        {"first_seed", o.seed},             {"seeds", o.seeds},                 {"threads", num_threads()},
        {"device", device == examples::device_kind::cuda ? "cuda" : "cpu"}};
    examples::write_summary(*o.summary, example_name, examples::majority_rate(test.labels), summaries, extra);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tprod::examples::run_example(example_name, argc, argv, run); }
