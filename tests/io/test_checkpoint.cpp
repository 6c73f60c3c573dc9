// SPDX-License-Identifier: Apache-2.0
// Model checkpoints (nn/model/checkpoint.hpp): a save/load round trip through the parameter-name tree, strict loading
// (missing, unexpected, mis-shaped and mis-typed tensors refused, naming the parameter, leaving the model as it
// was), and a checkpoint edited by Python (json + struct only) loaded back.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/transform/dct.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

template <class T>
auto small_model(std::uint64_t seed, std::size_t layers = 2, std::size_t width = 8) {
  nn::text_classifier_config c;
  c.vocabulary = 13;
  c.classes = 2;
  c.width = width;
  c.heads = 2;
  c.hidden = 8;
  c.layers = layers;
  c.slices = 2;
  c.learnable_positions = true;
  c.seed = seed;
  return nn::make_text_classifier<T>(c, dct{});
}

/// Copies of every parameter value, in visiting order.
template <class T, class M>
std::vector<tensor3<T>> values_of(M& model) {
  std::vector<tensor3<T>> v;
  model.for_each_parameter([&](std::string_view, tensor3<T>& t, tensor3<T>&) { v.push_back(t); });
  return v;
}

template <class T>
bool all_equal(const std::vector<tensor3<T>>& a, const std::vector<tensor3<T>>& b, T factor = T(1)) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() || !(a[i].elements() * factor == b[i].elements())) return false;
  return true;
}

}  // namespace

TEST_CASE("checkpoint: save, then load into a differently initialized model of the same shape") {
  scratch_dir dir;
  auto a = small_model<float>(1), b = small_model<float>(2);
  REQUIRE_FALSE(all_equal(values_of<float>(a), values_of<float>(b)));
  nn::save_checkpoint<float>(dir / "a.safetensors", a, {{"epoch", "3"}});
  const auto meta = nn::load_checkpoint<float>(dir / "a.safetensors", b);
  CHECK(all_equal(values_of<float>(a), values_of<float>(b)));
  CHECK(meta.at("epoch") == "3");
  const io::safetensors_reader r(dir / "a.safetensors");
  CHECK(r.contains("encoder.1.attn.w_qkv"));
  CHECK(r.entry("encoder.1.attn.w_qkv").shape == std::vector<std::size_t>{4, 12, 2});
  CHECK(r.entry("head.weight").dtype == "F32");
}

TEST_CASE("checkpoint: loading is strict and all-or-nothing") {
  scratch_dir dir;
  auto a = small_model<float>(1);
  nn::save_checkpoint<float>(dir / "a.safetensors", a);
  auto deeper = small_model<float>(2, 3);
  const auto before = values_of<float>(deeper);
  CHECK(message_of<io_error>([&] { nn::load_checkpoint<float>(dir / "a.safetensors", deeper); })
            .find("no tensor for the model's parameter 'encoder.2.attn.w_qkv'") != std::string::npos);
  auto shallower = small_model<float>(2, 1);
  CHECK(message_of<io_error>([&] { nn::load_checkpoint<float>(dir / "a.safetensors", shallower); })
            .find("'encoder.1.") != std::string::npos);
  auto wider = small_model<float>(2, 2, 12);
  const auto wider_before = values_of<float>(wider);
  const std::string shape = message_of<shape_error>([&] { nn::load_checkpoint<float>(dir / "a.safetensors", wider); });
  CHECK(shape.find("a.safetensors") != std::string::npos);
  CHECK(shape.find("has shape") != std::string::npos);
  CHECK(all_equal(values_of<float>(wider), wider_before));  // nothing was overwritten
  CHECK(all_equal(values_of<float>(deeper), before));
  auto in_double = small_model<double>(2);  // a float checkpoint loads into a double model exactly
  nn::load_checkpoint<double>(dir / "a.safetensors", in_double);
  const auto as_float = values_of<float>(a);
  const auto as_double = values_of<double>(in_double);
  REQUIRE(as_float.size() == as_double.size());
  for (std::size_t t = 0; t < as_float.size(); ++t)
    CHECK(std::equal(as_float[t].elements().begin(), as_float[t].elements().end(),
                     as_double[t].elements().begin(), as_double[t].elements().end(),
                     [](float f, double d) { return double(f) == d; }));
  nn::save_checkpoint<double>(dir / "d.safetensors", in_double);
  auto back_to_float = small_model<float>(2);
  CHECK(message_of<io_error>([&] { nn::load_checkpoint<float>(dir / "d.safetensors", back_to_float); })
            .find("holds F64 data, not the F32 of the destination") != std::string::npos);
  CHECK(message_of<io_error>([&] { nn::load_checkpoint<float>(dir / "missing.safetensors", a); })
            .find("missing.safetensors") != std::string::npos);
  CHECK_THROWS_AS(nn::save_checkpoint<float>(dir / "no-such-dir" / "a.safetensors", a), io_error);
}

TEST_CASE("checkpoint: saved as BF16 or F16, it loads back as the model's weights rounded to that format") {
  scratch_dir dir;
  auto a = small_model<float>(1), b = small_model<float>(2);
  nn::save_checkpoint<float>(dir / "bf16.safetensors", a, {}, "BF16");
  nn::save_checkpoint<float>(dir / "f16.safetensors", a, {}, "F16");
  CHECK(io::safetensors_reader(dir / "bf16.safetensors").entry("head.weight").dtype == "BF16");
  // bfloat16 keeps a float's upper 16 bits, rounded to nearest even: u + 0x7FFF + (bit 16 of u), low half cleared
  const auto to_bf16 = [](float f) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    return std::bit_cast<float>(u);
  };
  nn::load_checkpoint<float>(dir / "bf16.safetensors", b);
  const auto original = values_of<float>(a), loaded = values_of<float>(b);
  for (std::size_t t = 0; t < original.size(); ++t)
    for (Eigen::Index i = 0; i < original[t].elements().size(); ++i)
      CHECK(loaded[t].elements()(i) == to_bf16(original[t].elements()(i)));
  nn::load_checkpoint<float>(dir / "f16.safetensors", b);  // F16 keeps 11 significant bits of these small weights
  const auto halves = values_of<float>(b);
  for (std::size_t t = 0; t < original.size(); ++t)
    CHECK((halves[t].elements() - original[t].elements()).cwiseAbs().maxCoeff() <=
          original[t].elements().cwiseAbs().maxCoeff() * 0x1p-11f);
  CHECK_THROWS_AS(nn::save_checkpoint<float>(dir / "i8.safetensors", a, {}, "I8"), argument_error);
}

TEST_CASE("checkpoint: a checkpoint split into shards loads through its index as the whole file does") {
  scratch_dir dir;
  auto a = small_model<float>(1), b = small_model<float>(2);
  nn::save_checkpoint<float>(dir / "whole.safetensors", a, {{"epoch", "4"}});
  const io::safetensors_reader whole(dir / "whole.safetensors");
  io::safetensors_writer first, second;  // alternate tensors into two shards, as published models are split
  std::string map;
  for (std::size_t i = 0; i < whole.names().size(); ++i) {
    const std::string& name = whole.names()[i];
    const std::string shard = i % 2 ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
    (i % 2 ? second : first).add_bytes(name, whole.entry(name).dtype, whole.entry(name).shape, whole.bytes(name));
    map += (map.empty() ? "" : ", ") + ("\"" + name + "\": \"" + shard + "\"");
  }
  first.write(dir / "model-00001-of-00002.safetensors");
  second.write(dir / "model-00002-of-00002.safetensors");
  std::ofstream(dir / "model.safetensors.index.json") << R"({"metadata": {"epoch": "4"}, "weight_map": {)" << map << "}}";
  REQUIRE_FALSE(all_equal(values_of<float>(a), values_of<float>(b)));
  const auto meta = nn::load_checkpoint<float>(dir / "model.safetensors.index.json", b);
  CHECK(meta.at("epoch") == "4");
  CHECK(all_equal(values_of<float>(a), values_of<float>(b)));
}

#ifdef TPROD_TEST_PYTHON3
TEST_CASE("checkpoint: a file rewritten by Python (json + struct) loads with the values Python wrote") {
  scratch_dir dir;
  auto a = small_model<double>(1), b = small_model<double>(2);
  nn::save_checkpoint<double>(dir / "ours.safetensors", a, {{"epoch", "1"}});
  const std::string cmd = std::string("\"") + TPROD_TEST_PYTHON3 + "\" \"" TPROD_TEST_IO_DIR
                          "/safetensors_python.py\" double \"" + (dir / "ours.safetensors").string() + "\" \"" +
                          (dir / "py.safetensors").string() + "\"";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto meta = nn::load_checkpoint<double>(dir / "py.safetensors", b);
  CHECK(meta.at("written_by") == "python");
  CHECK(meta.at("epoch") == "1");
  CHECK(all_equal(values_of<double>(a), values_of<double>(b), 2.0));  // doubling is exact in binary
}
#endif
