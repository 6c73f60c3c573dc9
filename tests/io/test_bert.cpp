// SPDX-License-Identifier: Apache-2.0
// BERT in the Hugging Face layout (nn/model/bert.hpp): the classifier and the masked LM written in
// BertForSequenceClassification's and BertForMaskedLM's names and read back equal; query, key and value as transposed
// column blocks of w_qkv; the older gamma/beta names and BertModel's unprefixed ones; a head the folder lacks kept
// fresh and listed; the segment embedding against its definition; config.json read strictly.
// The logits against a PyTorch BERT are checked in python/tests/test_bert.py.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "tprod/nn/model/bert.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

nn::bert_config tiny_bert() {
  nn::bert_config c;
  c.vocabulary = 13;
  c.positions = 7;
  c.segments = 2;
  c.width = 8;
  c.layers = 2;
  c.heads = 2;
  c.hidden = 12;
  c.labels = 3;
  return c;
}

template <class M>
std::map<std::string, tensor3<double>> values_of(M& m) {
  std::map<std::string, tensor3<double>> v;
  m.for_each_parameter([&](std::string_view name, tensor3<double>& x, tensor3<double>&) { v.emplace(name, x); });
  return v;
}

bool equal_values(const tensor3<double>& a, const tensor3<double>& b) {
  return a.shape() == b.shape() && std::equal(a.data(), a.data() + a.size(), b.data());
}

// Two sequences of 5 tokens, the second padded after 3, the second sentence's tokens in segment 1.
nn::batch two_sentences() {
  nn::batch b(2, {1, 4, 5, 2, 7, 1, 9, 12, 0, 0}, {5, 3}, nn::phase::eval);
  b.segments = {0, 0, 0, 1, 1, 0, 1, 1, 0, 0};
  return b;
}

}  // namespace

TEST_CASE("bert classifier: saved in BertForSequenceClassification's layout, loaded back equal, logits equal") {
  scratch_dir dir;
  const auto c = tiny_bert();
  auto model = nn::make_bert_classifier<double>(c, 3);
  nn::save_bert<double>(dir / "bert", model, c);
  const io::safetensors_reader file(dir / "bert" / "model.safetensors");
  // 5 embedding tensors, 16 per layer (query, key, value with biases, 3 denses, 2 LayerNorms), pooler, classifier
  CHECK(file.names().size() == 5 + 16 * c.layers + 4);
  const auto& w_qkv = model.get<5>()[1].attn.w_qkv.data();  // d × 3d: [Q | K | V]
  CHECK(file.entry("bert.encoder.layer.1.attention.self.key.weight").shape == std::vector<std::size_t>{8, 8});
  // nn.Linear: out × in, so key.weight[j, i] is column d + j, row i of w_qkv
  CHECK(file.values<double>("bert.encoder.layer.1.attention.self.key.weight")[5 * 8 + 2] == w_qkv(2, 8 + 5, 0));
  CHECK(file.values<double>("bert.encoder.layer.1.attention.self.value.bias")[3] ==
        model.get<5>()[1].attn.b_qkv.data()(0, 16 + 3, 0));
  CHECK(file.entry("bert.embeddings.token_type_embeddings.weight").shape == std::vector<std::size_t>{2, 8});
  CHECK(file.entry("classifier.weight").shape == std::vector<std::size_t>{3, 8});
  CHECK(file.entry("bert.encoder.layer.0.intermediate.dense.weight").shape == std::vector<std::size_t>{12, 8});

  auto loaded = nn::load_bert_classifier<double>(dir / "bert");
  CHECK(loaded.fresh.empty());
  CHECK(loaded.config.labels == 3);
  const auto before = values_of(model), after = values_of(loaded.model);
  REQUIRE(before.size() == after.size());
  for (const auto& [name, x] : before) {
    CAPTURE(name);
    CHECK(equal_values(x, after.at(name)));
  }
  const tensor3<double> none;
  const tensor3<double> z = model.forward(none, two_sentences());
  CHECK(z.shape() == "2x3x1");
  const tensor3<double>& z_loaded = loaded.model.forward(none, two_sentences());
  CHECK(equal_values(z, z_loaded));
  // the second sentence's segment changes the logits; its padding does not
  auto other = two_sentences();
  other.segments[3] = 0;
  CHECK_FALSE(equal_values(z, model.forward(none, other)));
  other = two_sentences();
  other.tokens[8] = 11;
  CHECK(equal_values(z, model.forward(none, other)));
}

TEST_CASE("bert masked LM: saved in BertForMaskedLM's layout, tied or untied; heads the folder lacks kept fresh") {
  scratch_dir dir;
  const auto c = tiny_bert();
  auto mlm = nn::make_bert_masked_lm<double>(c, 4);
  nn::save_bert<double>(dir / "mlm", mlm, c);
  {
    const io::safetensors_reader file(dir / "mlm" / "model.safetensors");
    CHECK_FALSE(file.contains("cls.predictions.decoder.weight"));  // tied: the word embeddings
    CHECK(file.entry("cls.predictions.bias").shape == std::vector<std::size_t>{13});
  }
  auto loaded = nn::load_bert_masked_lm<double>(dir / "mlm");
  CHECK(loaded.config.tied);
  const tensor3<double> none;
  const auto b = two_sentences();
  const tensor3<double> z = mlm.forward(none, b);
  CHECK(z.shape() == "10x13x1");
  CHECK(equal_values(z, loaded.model.forward(none, b)));

  mlm.get<9>().params.value.weight.data()(1, 2, 0) += 0.5;  // training untied the decoder
  nn::save_bert<double>(dir / "untied", mlm, c);
  CHECK(io::safetensors_reader(dir / "untied" / "model.safetensors").contains("cls.predictions.decoder.weight"));
  auto untied = nn::load_bert_masked_lm<double>(dir / "untied");
  CHECK_FALSE(untied.config.tied);
  CHECK(equal_values(mlm.forward(none, b), untied.model.forward(none, b)));

  // fine-tuning from the pre-trained encoder: the classifier's pooler and classifier are fresh, the rest is read
  auto classifier = nn::load_bert_classifier<double>(dir / "mlm", 9);
  CHECK(classifier.fresh ==
        std::vector<std::string>{"pooler.weight", "pooler.bias", "classifier.weight", "classifier.bias"});
  const auto pre = values_of(loaded.model), fine = values_of(classifier.model);
  for (const auto& [name, x] : fine) {
    CAPTURE(name);
    if (name.starts_with("pooler") || name.starts_with("classifier")) continue;
    CHECK(equal_values(x, pre.at(name)));
  }
  auto drawn_model = nn::make_bert_classifier<double>(c, 9);
  const auto drawn = values_of(drawn_model);
  CHECK(equal_values(fine.at("classifier.weight"), drawn.at("classifier.weight")));  // as drawn from the seed
  // and back: a masked LM from the classifier's folder has a fresh head, its decoder the word embeddings
  nn::save_bert<double>(dir / "classifier", classifier.model, c);
  auto back = nn::load_bert_masked_lm<double>(dir / "classifier");
  CHECK(back.fresh.size() == 5);  // all but the decoder, which is the (tied) word embeddings
  const auto& decoder = back.model.get<9>().params.value.weight.data();
  const auto& table = back.model.get<0>().params.value.table;
  CHECK(equal_values(decoder, table));
}

TEST_CASE("bert: BertModel's unprefixed names and the older LayerNorm gamma/beta are read; missing tensors refused") {
  scratch_dir dir;
  const auto c = tiny_bert();
  auto model = nn::make_bert_classifier<double>(c, 5);
  io::safetensors_writer w;
  auto table = nn::bert_tensors(c, nn::bert_head::classifier, "", {"gamma", "beta"});
  std::erase_if(table, [](const nn::published_tensor& t) { return t.ours.starts_with("classifier"); });
  nn::add_published<double>(w, model, table);
  w.add("embeddings.position_ids", {1, 7}, std::span<const double>(std::vector<double>(7).data(), 7));
  std::filesystem::create_directories(dir / "model");
  w.write(dir / "model" / "model.safetensors");
  std::ofstream(dir / "model" / "config.json") << nn::bert_config_json(c, "BertModel").dump();
  auto loaded = nn::load_bert_classifier<double>(dir / "model", 5);
  CHECK(loaded.fresh == std::vector<std::string>{"classifier.weight", "classifier.bias"});
  const auto a = values_of(model), b = values_of(loaded.model);
  for (const auto& [name, x] : a) {
    CAPTURE(name);
    CHECK(equal_values(x, b.at(name)));
  }

  io::safetensors_writer partial;
  table.erase(table.begin() + 7);  // a row of layer 0's query
  nn::add_published<double>(partial, model, table, {});
  partial.write(dir / "model" / "model.safetensors");
  CHECK(message_of<io_error>([&] { (void)nn::load_bert_classifier<double>(dir / "model"); })
            .find("has no tensor 'encoder.layer.0.attention.self.key.weight'") != std::string::npos);
}

TEST_CASE("segment embedding: 𝒳 + S[segment] forward, the scatter of d𝒳 backward, ids checked") {
  auto e = nn::make_embedding_params<double>(3, 4, 7);
  nn::segment_embedding<double> layer(e, 1);
  const auto x = random_tensor3<double>(5, 4, 1, 8);
  nn::batch b(1, {}, {});
  b.segments = {0, 2, 1, 2, 0};
  const auto y = layer.forward(x, b);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t i = 0; i < 4; ++i) CHECK(y(r, i, 0) == x(r, i, 0) + e.table(i, b.segments[r], 0));
  const auto dy = random_tensor3<double>(5, 4, 1, 9);
  CHECK(equal_values(layer.backward(dy), dy));
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(layer.params.grad.table(i, 2, 0) == doctest::Approx(dy(1, i, 0) + dy(3, i, 0)).epsilon(1e-15));
    CHECK(layer.params.grad.table(i, 1, 0) == dy(2, i, 0));
  }
  nn::batch none(1, {}, {});  // no ids: all segment 0
  const auto y0 = layer.forward(x, none);
  CHECK(y0(3, 1, 0) == x(3, 1, 0) + e.table(1, 0, 0));
  b.segments[4] = 3;
  CHECK(message_of<shape_error>([&] { (void)layer.forward(x, b); }).find("segment id 3 at position 4") !=
        std::string::npos);
  b.segments.pop_back();
  CHECK(message_of<shape_error>([&] { (void)layer.forward(x, b); }).find("4 segment ids for an input of 5 tokens") !=
        std::string::npos);
}

TEST_CASE("bert: config.json read strictly") {
  scratch_dir dir;
  const auto write = [&](const std::string& text) {
    std::ofstream(dir / "config.json") << text;
    return dir / "config.json";
  };
  const auto c = nn::read_bert_config(write(R"({"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2,
      "num_hidden_layers": 1, "intermediate_size": 16, "hidden_act": "gelu_new", "layer_norm_eps": 1e-7,
      "id2label": {"0": "ham", "1": "spam", "2": "other"}, "classifier_dropout": null, "hidden_dropout_prob": 0.2})"));
  CHECK(c.labels == 3);
  CHECK(c.act == nn::activation::gelu_tanh);
  CHECK(c.eps == 1e-7);
  CHECK(c.classifier_dropout == 0.2);
  CHECK(c.layer().placement == nn::norm_placement::post);
  const auto base = nn::read_bert_config(write(R"({"model_type": "bert"})"));  // BERT-base's defaults
  CHECK((base.width == 768 && base.vocabulary == 30522 && base.labels == 2 && base.eps == 1e-12));
  // the written config reads back as it was
  auto d = tiny_bert();
  d.act = nn::activation::relu;
  const auto again = nn::read_bert_config(write(nn::bert_config_json(d, "BertForMaskedLM").dump()));
  CHECK((again.width == 8 && again.labels == 3 && again.act == nn::activation::relu && again.hidden == 12));
  const auto refused = [&](const std::string& text) {
    return message_of<io_error>([&] { (void)nn::read_bert_config(write(text)); });
  };
  CHECK(refused(R"({"model_type": "gpt2"})").find("model_type 'gpt2'") != std::string::npos);
  CHECK(refused(R"({"model_type": "bert", "position_embedding_type": "relative_key"})").find("relative_key") !=
        std::string::npos);
  CHECK(refused(R"({"model_type": "bert", "is_decoder": true})").find("is_decoder") != std::string::npos);
  CHECK(refused(R"({"model_type": "bert", "problem_type": "regression"})").find("'regression'") != std::string::npos);
  CHECK(refused(R"({"model_type": "bert", "hidden_act": "silu"})").find("hidden_act \"silu\"") != std::string::npos);
  CHECK(refused(R"({"model_type": "bert", "type_vocab_size": "two"})").find("'type_vocab_size'") != std::string::npos);
  CHECK(message_of<shape_error>([&] {
          (void)nn::read_bert_config(write(R"({"model_type": "bert", "num_attention_heads": 5})"));
        }).find("num_attention_heads 5") != std::string::npos);
  CHECK(message_of<shape_error>([&] { (void)nn::read_bert_config(write(R"({"model_type": "bert", "num_labels": 0})")); })
            .find("num_labels 0") != std::string::npos);
}
