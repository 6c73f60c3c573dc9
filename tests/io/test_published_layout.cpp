// SPDX-License-Identifier: Apache-2.0
// Checkpoints in published layouts (nn/model/published_layout.hpp, nn/model/gpt2.hpp): GPT-2 written in GPT2Model's
// names and layouts and read back; a table that splits a fused parameter into column blocks of transposed tensors
// (BERT's query, key and value); tables and files that do not fit, refused by name with the model unchanged.
// The logits against a PyTorch GPT-2 are checked in python/tests/test_gpt2.py.
#include <doctest/doctest.h>

#include <string>

#include "scratch_dir.hpp"
#include "tprod/nn/model/gpt2.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

nn::gpt2_config tiny_config() {
  nn::gpt2_config c;
  c.vocabulary = 11;
  c.positions = 6;
  c.width = 8;
  c.layers = 2;
  c.heads = 2;
  c.hidden = 12;
  return c;
}

std::vector<tensor3<double>> values_of(nn::gpt2_model<double>& m) {
  std::vector<tensor3<double>> v;
  m.for_each_parameter([&](std::string_view, tensor3<double>& x, tensor3<double>&) { v.push_back(x); });
  return v;
}

bool same_values(const std::vector<tensor3<double>>& a, const std::vector<tensor3<double>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || !std::equal(a[i].data(), a[i].data() + a[i].size(), b[i].data()))
      return false;
  return true;
}

}  // namespace

TEST_CASE("gpt2: saved in GPT2Model's names and layouts, loaded back equal, logits equal") {
  scratch_dir dir;
  const auto c = tiny_config();
  auto model = nn::make_gpt2<double>(c, 3);
  nn::save_gpt2<double>(dir / "gpt2", model, c);
  const io::safetensors_reader file(dir / "gpt2" / "model.safetensors");
  CHECK(file.names().size() == 2 + 12 * c.layers + 2);  // wte, wpe, 12 per block, ln_f; the tied head not again
  const auto& w_qkv = model.get<3>()[1].attn.w_qkv.data();
  CHECK(file.entry("h.1.attn.c_attn.weight").shape == std::vector<std::size_t>{8, 24});  // Conv1D: in × out
  const auto qkv = file.values<double>("h.1.attn.c_attn.weight");
  CHECK(qkv[2 * 24 + 17] == w_qkv(2, 17, 0));
  const auto& table = model.get<0>().params.value.table;  // d×V
  CHECK(file.entry("wte.weight").shape == std::vector<std::size_t>{11, 8});
  CHECK(file.values<double>("wte.weight")[7 * 8 + 3] == table(3, 7, 0));
  CHECK(file.entry("h.0.ln_2.bias").shape == std::vector<std::size_t>{8});

  auto loaded = nn::load_gpt2<double>(dir / "gpt2");
  CHECK(loaded.config.tied);
  CHECK(loaded.config.hidden == 12);
  CHECK(same_values(values_of(model), values_of(loaded.model)));
  const nn::batch b(2, {1, 2, 3, 4, 5, 6, 7, 8}, {}, nn::phase::eval);
  const tensor3<double> none;
  const tensor3<double> z = model.forward(none, b);
  CHECK(z.shape() == "8x11x1");
  const tensor3<double>& z_loaded = loaded.model.forward(none, b);
  CHECK(std::equal(z.data(), z.data() + z.size(), z_loaded.data()));

  // F16 and BF16 round trips read back the rounded values the writer produced
  nn::save_gpt2<double>(dir / "bf16", model, c, "BF16");
  CHECK(io::safetensors_reader(dir / "bf16" / "model.safetensors").entry("wpe.weight").dtype == "BF16");
  auto halved = nn::load_gpt2<float>(dir / "bf16");
  const auto& pos = halved.model.get<1>().params.value.table;
  CHECK(pos(1, 2, 0) == float(Eigen::bfloat16(float(model.get<1>().params.value.table(1, 2, 0)))));
}

TEST_CASE("gpt2: an untied head is written as lm_head.weight, and refused by a table that ties it") {
  scratch_dir dir;
  auto c = tiny_config();
  auto model = nn::make_gpt2<double>(c, 4);
  model.get<6>().params.value.weight.data()(0, 0, 0) += 1;  // training made the head differ from the table
  io::safetensors_writer w;
  CHECK(message_of<argument_error>([&] { nn::add_published<double>(w, model, nn::gpt2_tensors(c)); })
            .find("'wte.weight' would hold two different parameters") != std::string::npos);
  nn::save_gpt2<double>(dir / "untied", model, c);
  const io::safetensors_reader file(dir / "untied" / "model.safetensors");
  CHECK(file.contains("lm_head.weight"));
  auto loaded = nn::load_gpt2<double>(dir / "untied");
  CHECK_FALSE(loaded.config.tied);
  CHECK(same_values(values_of(model), values_of(loaded.model)));
}

TEST_CASE("published layout: a fused parameter read from column blocks of transposed tensors") {
  scratch_dir dir;
  const auto c = tiny_config();
  auto a = nn::make_gpt2<double>(c, 5), b = nn::make_gpt2<double>(c, 6);
  // GPT-2's table with layer 0's c_attn split as BERT stores it: query, key, value as nn.Linear (out × in)
  std::vector<nn::published_tensor> table;
  for (const auto& row : nn::gpt2_tensors(c))
    if (row.ours != "decoder.0.attn.w_qkv" && row.ours != "decoder.0.attn.b_qkv") table.push_back(row);
  const char* parts[] = {"query", "key", "value"};
  for (std::size_t k = 0; k < 3; ++k) {
    const std::string name = std::string("h.0.") + parts[k];
    table.push_back({"decoder.0.attn.w_qkv", name + ".weight", nn::published_layout::transposed, 8 * k, 8});
    table.push_back({"decoder.0.attn.b_qkv", name + ".bias", nn::published_layout::vector, 8 * k, 8});
  }
  io::safetensors_writer w;
  nn::add_published<double>(w, a, table);
  w.write(dir / "split.safetensors");
  const io::safetensors_reader file(dir / "split.safetensors");
  const auto key = file.values<double>("h.0.key.weight");  // [out, in]: key[o][i] = W_K(i, o)
  const auto& w_qkv = a.get<3>()[0].attn.w_qkv.data();
  CHECK(key[5 * 8 + 2] == w_qkv(2, 8 + 5, 0));
  CHECK(file.values<double>("h.0.value.bias")[3] == a.get<3>()[0].attn.b_qkv.data()(0, 16 + 3, 0));
  nn::load_published<double>(file, b, table);
  CHECK(same_values(values_of(a), values_of(b)));

  SUBCASE("a column left out or filled twice is refused, naming the parameter; the model is unchanged") {
    auto c2 = nn::make_gpt2<double>(c, 7);
    const auto before = values_of(c2);
    auto gap = table;
    gap.pop_back();
    gap.pop_back();  // the value block
    CHECK(message_of<argument_error>([&] { nn::load_published<double>(file, c2, gap); })
              .find("'decoder.0.attn.") != std::string::npos);
    auto twice = table;
    twice.push_back(twice.back());
    CHECK(message_of<argument_error>([&] { nn::load_published<double>(file, c2, twice); })
              .find("two rows fill column 16 of 'decoder.0.attn.b_qkv'") != std::string::npos);
    auto unknown = table;
    unknown.push_back({"decoder.9.attn.w_o", "x", nn::published_layout::same});
    CHECK(message_of<argument_error>([&] { nn::load_published<double>(file, c2, unknown); })
              .find("no parameter 'decoder.9.attn.w_o'") != std::string::npos);
    auto wrong_shape = table;
    for (auto& row : wrong_shape)
      if (row.theirs == "h.0.key.weight") row.layout = nn::published_layout::same;  // 8×8 either way: fits
    for (auto& row : wrong_shape)
      if (row.theirs == "wpe.weight") row.layout = nn::published_layout::transposed;  // [6, 8] read as [8, 6]
    CHECK(message_of<shape_error>([&] { nn::load_published<double>(file, c2, wrong_shape); })
              .find("wpe.weight") != std::string::npos);
    CHECK(message_of<io_error>([&] { nn::load_published<double>(file, c2, nn::gpt2_tensors(c)); })
              .find("has no tensor 'h.0.attn.c_attn.weight'") != std::string::npos);
    CHECK(same_values(before, values_of(c2)));
  }
}

TEST_CASE("gpt2: config.json read strictly") {
  scratch_dir dir;
  const auto write = [&](const std::string& text) {
    std::ofstream(dir / "config.json") << text;
    return dir / "config.json";
  };
  const auto c = nn::read_gpt2_config(write(R"({"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 1,
      "vocab_size": 5, "n_ctx": 4, "n_inner": null, "activation_function": "gelu", "layer_norm_epsilon": 1e-6})"));
  CHECK(c.positions == 4);
  CHECK(c.hidden == 32);
  CHECK(c.act == nn::activation::gelu);
  CHECK(c.eps == 1e-6);
  CHECK(nn::read_gpt2_config(write(R"({"model_type": "gpt2"})")).width == 768);  // GPT-2 small's defaults
  const auto refused = [&](const std::string& text) {
    return message_of<io_error>([&] { (void)nn::read_gpt2_config(write(text)); });
  };
  CHECK(refused(R"({"model_type": "bert"})").find("model_type 'bert'") != std::string::npos);
  CHECK(refused(R"({"n_embd": 8})").find("model_type '(none)'") != std::string::npos);
  CHECK(refused(R"({"model_type": "gpt2", "n_layer": -1})").find("'n_layer'") != std::string::npos);
  CHECK(refused(R"({"model_type": "gpt2", "activation_function": "silu"})").find("\"silu\"") != std::string::npos);
  CHECK(refused(R"({"model_type": "gpt2", "add_cross_attention": true})").find("add_cross_attention") !=
        std::string::npos);
  CHECK(refused(R"({"model_type": "gpt2", "scale_attn_weights": false})").find("scale_attn_weights") !=
        std::string::npos);
  CHECK(refused(R"({"model_type": "gpt2",)").find("not valid JSON") != std::string::npos);
  CHECK(message_of<shape_error>([&] { (void)nn::read_gpt2_config(write(R"({"model_type": "gpt2", "n_head": 5})")); })
            .find("n_head 5") != std::string::npos);
  CHECK(message_of<io_error>([&] { (void)nn::read_gpt2_config(dir / "none.json"); }).find("cannot be opened") !=
        std::string::npos);
  write(R"({"model_type": "gpt2"})");
  CHECK(message_of<io_error>([&] { (void)nn::load_gpt2<double>(dir.path); }).find("neither model.safetensors") !=
        std::string::npos);
}
