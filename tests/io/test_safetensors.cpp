// SPDX-License-Identifier: Apache-2.0
// safetensors checkpoints: round trips of tensor3s and plain arrays of several dtypes, the [m, n, p] C-order
// layout checked against Python (json + struct only) both ways, loading into existing tensors, and every kind of
// malformed file refused with a message naming the file and the problem.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "index_code.hpp"
#include "scratch_dir.hpp"
#include "tprod/io/safetensors.hpp"

using namespace tprod;
using namespace tprod::io;
using tprod::test::file_bytes;
using tprod::test::index_code;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

template <class T>
tensor3<T> coded(std::size_t m, std::size_t n, std::size_t p) {
  tensor3<T> t(m, n, p);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < p; ++k) t(i, j, k) = T(index_code(i, j, k));
  return t;
}

template <class T>
bool same(const tensor3<T>& a, const tensor3<T>& b) {
  return a.m() == b.m() && a.n() == b.n() && a.p() == b.p() && a.elements() == b.elements();
}

/// A file laid out by hand: 8-byte little-endian length, the header text as given, then the data.
std::string st_bytes(const std::string& header, const std::string& data) {
  std::string out;
  for (int b = 0; b < 8; ++b) out += char((std::uint64_t(header.size()) >> (8 * b)) & 0xff);
  return out + header + data;
}

std::string reject(const std::string& header, const std::string& data) {
  return message_of<io_error>([&] { safetensors_reader(st_bytes(header, data), "bad.safetensors"); });
}

}  // namespace

TEST_CASE("safetensors: tensor3s and plain arrays of several dtypes round-trip with their metadata") {
  scratch_dir dir;
  const auto w = coded<float>(2, 3, 4);
  const auto b = coded<double>(5, 1, 2);
  const std::vector<std::int32_t> ids{1, 2, 3, 4, 5, 6};
  const std::vector<double> scalar{2.5};
  safetensors_writer out;
  out.add("enc.0.attn.wq", w);
  out.add("enc.0.ffn.b", b);
  out.add("vocab.ids", {2, 3}, std::span<const std::int32_t>(ids));
  out.add("lr", {}, std::span<const double>(scalar));
  out.set_metadata("epoch", "3");
  out.write(dir / "model.safetensors");
  CHECK(dir.entries() == std::set<std::string>{"model.safetensors"});

  const safetensors_reader in(dir / "model.safetensors");
  CHECK(in.metadata() == std::map<std::string, std::string>{{"epoch", "3"}});
  CHECK(in.names().size() == 4);
  CHECK(in.entry("enc.0.attn.wq").dtype == "F32");
  CHECK(in.entry("enc.0.attn.wq").shape == std::vector<std::size_t>{2, 3, 4});
  CHECK(same(in.tensor<float>("enc.0.attn.wq"), w));
  CHECK(same(in.tensor<double>("enc.0.ffn.b"), b));
  CHECK(in.values<std::int32_t>("vocab.ids") == ids);
  CHECK(in.entry("lr").shape.empty());
  CHECK(in.values<double>("lr") == scalar);
  // C order of [m, n, p]: the element after (0, 0, 0) is (0, 0, 1).
  CHECK(in.values<float>("enc.0.attn.wq")[1] == float(index_code(0, 0, 1)));
  // Doubles come first (alignment), and the header keeps the data 8-byte aligned.
  CHECK(in.names().front() == "enc.0.ffn.b");
  const std::string raw = file_bytes(dir / "model.safetensors");
  CHECK(raw.size() % 8 == 0);
}

TEST_CASE("safetensors: loading into an existing tensor refuses another shape or dtype, naming both") {
  scratch_dir dir;
  safetensors_writer out;
  out.add("layer.w", coded<float>(2, 3, 4));
  const std::vector<float> bias{1, 2, 3};
  out.add("layer.b", {3}, std::span<const float>(bias));
  out.write(dir / "m.safetensors");
  const safetensors_reader in(dir / "m.safetensors");

  tensor3<float> ok(2, 3, 4);
  in.load_into("layer.w", ok);
  CHECK(same(ok, coded<float>(2, 3, 4)));
  std::vector<float> b(3);
  in.load_into("layer.b", {3}, std::span<float>(b));
  CHECK(b == bias);

  tensor3<float> wrong(2, 4, 3);
  const std::string shape = message_of<shape_error>([&] { in.load_into("layer.w", wrong); });
  CHECK(shape.find("m.safetensors") != std::string::npos);
  CHECK(shape.find("'layer.w'") != std::string::npos);
  CHECK(shape.find("(2, 3, 4)") != std::string::npos);
  CHECK(shape.find("(2, 4, 3)") != std::string::npos);

  tensor3<double> wider(2, 3, 4);  // F32 into double is exact: converted on read
  in.load_into("layer.w", wider);
  CHECK(same(wider, coded<double>(2, 3, 4)));
  std::vector<std::int32_t> ints(3);
  const std::string dtype = message_of<io_error>([&] { in.load_into("layer.b", {3}, std::span<std::int32_t>(ints)); });
  CHECK(dtype.find("'layer.b' holds F32 data, not the I32") != std::string::npos);
  CHECK(message_of<io_error>([&] { (void)in.tensor<float>("layer.b"); }).find("not the (m, n, p)") != std::string::npos);
  CHECK(message_of<io_error>([&] { (void)in.entry("layer.x"); }).find("no tensor named 'layer.x' (it has layer.b, layer.w)") !=
        std::string::npos);
  CHECK(message_of<shape_error>([&] { in.load_into("layer.b", {4}, std::span<float>(b)); }).find("(3,)") != std::string::npos);
}

TEST_CASE("safetensors: the writer refuses repeated names and element counts that do not fit the shape") {
  safetensors_writer out;
  const std::vector<float> v(6);
  out.add("a", {2, 3}, std::span<const float>(v));
  CHECK_THROWS_AS(out.add("a", {6}, std::span<const float>(v)), tprod::argument_error);
  CHECK_THROWS_AS(out.add("__metadata__", {6}, std::span<const float>(v)), tprod::argument_error);
  CHECK(message_of<shape_error>([&] { out.add("b", {4, 2}, std::span<const float>(v)); }).find("(4, 2)") !=
        std::string::npos);
}

TEST_CASE("safetensors: malformed files are refused with the file name and the problem") {
  const std::string f8(8, '\0');  // one F64 or two F32
  const std::string one = R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
  CHECK_NOTHROW(safetensors_reader(st_bytes(one, f8), "good.safetensors"));

  CHECK(message_of<io_error>([] { safetensors_reader(std::string(5, '\0'), "bad.safetensors"); })
            .find("bad.safetensors: too short") == 0);
  // Truncated: the header or the data cut short.
  const std::string whole = st_bytes(one, f8);
  CHECK(message_of<io_error>([&] { safetensors_reader(whole.substr(0, 20), "bad.safetensors"); })
            .find("the header length is") != std::string::npos);
  CHECK(message_of<io_error>([&] { safetensors_reader(whole.substr(0, whole.size() - 3), "bad.safetensors"); })
            .find("out of range") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]})", f8).find("not valid JSON") != std::string::npos);
  CHECK(reject("[1, 2]", f8).find("not a JSON object") != std::string::npos);
  // A number beyond double's range: nlohmann-json throws out_of_range, not parse_error (found by fuzz_safetensors).
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"x":1e999})", f8).find("not valid JSON") !=
        std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,16]}})", f8).find("out of range") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}})", f8).find("needs 16 bytes") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f8)
            .find("overlap") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f8).find("belong to no tensor") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f8).find("after the last tensor") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"X9","shape":[1],"data_offsets":[0,8]}})", f8).find("unknown dtype 'X9'") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[-1],"data_offsets":[0,8]}})", f8).find("non-negative integer") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,2],"data_offsets":[0,8]}})", f8).find("overflows") !=
        std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1]}})", f8).find("needs the fields") != std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8],"x":1}})", f8).find("unexpected field 'x'") !=
        std::string::npos);
  CHECK(reject(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", f8)
            .find("names 'a' twice") != std::string::npos);
  CHECK(reject(R"({"__metadata__":{"k":1},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", f8).find("'k' is not a string") !=
        std::string::npos);
}

TEST_CASE("safetensors: a failed write leaves the old file and nothing else; a missing file is named") {
  scratch_dir dir;
  safetensors_writer first, second;
  first.add("a", coded<float>(1, 1, 2));
  second.add("b", coded<float>(1, 1, 3));
  first.write(dir / "m.safetensors");
  const std::string before = file_bytes(dir / "m.safetensors");
  std::filesystem::create_directory(dir / "taken");
  CHECK(message_of<io_error>([&] { second.write(dir / "taken"); }).find("taken: cannot replace") != std::string::npos);
  CHECK(message_of<io_error>([&] { second.write(dir / "no/such/dir.safetensors"); }).find("dir.safetensors") !=
        std::string::npos);
  CHECK(dir.entries() == std::set<std::string>{"m.safetensors", "taken"});
  CHECK(file_bytes(dir / "m.safetensors") == before);
  CHECK(message_of<io_error>([&] { safetensors_reader(dir / "none.safetensors"); }).find("none.safetensors: cannot open") !=
        std::string::npos);
}

#ifdef TPROD_TEST_PYTHON3
namespace {
int run_python(const std::string& mode, const std::filesystem::path& file) {
  const std::string cmd = std::string("\"") + TPROD_TEST_PYTHON3 + "\" \"" TPROD_TEST_IO_DIR "/safetensors_python.py\" " +
                          mode + " \"" + file.string() + "\"";
  return std::system(cmd.c_str());
}
}  // namespace

TEST_CASE("safetensors: a file written by Python (json + struct) is read with the right values") {
  scratch_dir dir;
  REQUIRE(run_python("write", dir / "py.safetensors") == 0);
  const safetensors_reader in(dir / "py.safetensors");
  CHECK(in.metadata().at("written_by") == "python");
  CHECK(same(in.tensor<float>("model.embed.weight"), coded<float>(2, 3, 4)));
  CHECK(in.values<double>("model.head.bias") == std::vector<double>{0.5, -1.25, 3.0});
  CHECK(in.values<std::int64_t>("model.steps") == std::vector<std::int64_t>{7});
}

TEST_CASE("safetensors: a file we write is read by Python (json + struct) with the right values") {
  scratch_dir dir;
  safetensors_writer out;
  out.add("enc.0.w", coded<float>(2, 3, 4));
  const std::vector<double> b{0, 0.5, 1, 1.5, 2};
  out.add("enc.0.b", {5}, std::span<const double>(b));
  const std::vector<std::int32_t> ids{1, 2, 3, 4};
  out.add("enc.0.ids", {2, 2}, std::span<const std::int32_t>(ids));
  out.set_metadata("epoch", "3");
  out.write(dir / "ours.safetensors");
  CHECK(run_python("check", dir / "ours.safetensors") == 0);
}
#else
TEST_CASE("safetensors: Python cross-checks skipped (python3 was not found at configure time)") {
  MESSAGE("python3 not found: the Python cross-checks of the safetensors layout were skipped");
}
#endif

namespace {
/// Little-endian bytes of 16-bit patterns.
std::string halves(const std::vector<std::uint16_t>& bits) {
  std::string out;
  for (const auto b : bits) out += {char(b & 0xff), char(b >> 8)};
  return out;
}
}  // namespace

TEST_CASE("safetensors: F16, BF16 and small integers convert on read where exact, anything narrower is refused") {
  scratch_dir dir;
  safetensors_writer out;
  // Bit patterns and their values from the IEEE 754 binary16 and bfloat16 layouts: 1, -2, the largest finite,
  // the smallest subnormal, and 0.1 rounded to nearest.
  out.add_bytes("half", "F16", {5}, halves({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x2E66}));
  out.add_bytes("brain", "BF16", {1, 1, 4}, halves({0x3F80, 0xC000, 0x7F7F, 0x3DCD}));
  out.add_bytes("small", "I16", {3}, halves({0x0001, 0xFFFF, 0x8000}));
  const std::vector<double> wide{0.1, 1e300};
  out.add("wide", {2}, std::span<const double>(wide));
  const std::vector<std::int32_t> big{16777217, -3};
  out.add("big", {2}, std::span<const std::int32_t>(big));
  out.write(dir / "c.safetensors");
  const safetensors_reader in(dir / "c.safetensors");

  CHECK(in.values<float>("half") == std::vector<float>{1.0f, -2.0f, 65504.0f, 0x1p-24f, 0.0999755859375f});
  CHECK(in.values<double>("half") == std::vector<double>{1.0, -2.0, 65504.0, 0x1p-24, 0.0999755859375});
  const tensor3<float> b = in.tensor<float>("brain");
  CHECK(std::vector<float>(b.data(), b.data() + b.size()) ==
        std::vector<float>{1.0f, -2.0f, 0x1.FEp127f, 0.10009765625f});
  CHECK(in.values<float>("small") == std::vector<float>{1.0f, -1.0f, -32768.0f});
  CHECK(in.values<double>("big") == std::vector<double>{16777217.0, -3.0});  // exact in double
  const std::string narrow = message_of<io_error>([&] { (void)in.values<float>("wide"); });
  CHECK(narrow.find("'wide' holds F64 data, not the F32 of the destination, and F64 does not convert to it exactly") !=
        std::string::npos);
  CHECK(message_of<io_error>([&] { (void)in.values<float>("big"); }).find("I32") != std::string::npos);  // 2^24 + 1
}

TEST_CASE("safetensors: add_as stores F16 and BF16 rounded to nearest even, and refuses what they cannot hold") {
  scratch_dir dir;
  tensor3<float> x(2, 1, 2);  // C order [m, n, p]: x(0,0,0), x(0,0,1), x(1,0,0), x(1,0,1)
  x(0, 0, 0) = 1.0f;
  x(0, 0, 1) = -2.0f;
  x(1, 0, 0) = 0.1f;
  x(1, 0, 1) = 65504.0f;
  safetensors_writer out;
  out.add_as("h", x, "F16");
  out.add_as("b", x, "BF16");
  out.add_as("f", x, "F32");
  out.write(dir / "h.safetensors");
  const safetensors_reader in(dir / "h.safetensors");
  CHECK(in.entry("h").dtype == "F16");
  CHECK(in.bytes("h") == halves({0x3C00, 0xC000, 0x2E66, 0x7BFF}));
  // 0.1f = 0x3DCCCCCD: the dropped half 0xCCCD is above 0x8000, so BF16 rounds up; 65504 = 0x477FE000 rounds
  // to 0x4780 (65536)
  CHECK(in.bytes("b") == halves({0x3F80, 0xC000, 0x3DCD, 0x4780}));
  CHECK(same(in.tensor<float>("f"), x));
  safetensors_writer bad;
  x(0, 0, 0) = 65520.0f;  // rounds beyond F16's largest finite value
  CHECK(message_of<numerical_error>([&] { bad.add_as("h", x, "F16"); }).find("element 0 of tensor 'h'") !=
        std::string::npos);
  CHECK_THROWS_AS(bad.add_as("i", x, "I8"), argument_error);
  CHECK_THROWS_AS(bad.add_as("f64", x, "F64"), argument_error);  // a float tensor is not widened on writing
}

TEST_CASE("safetensors: add_as stores double as F32 rounded to nearest, and plain arrays of any shape") {
  scratch_dir dir;
  const std::vector<double> values{1.0 / 3.0, -2.5, 1e-40, 3e38};
  safetensors_writer out;
  out.add_as("v", {4}, std::span<const double>(values), "F32");
  out.add_as("m", {2, 2}, std::span<const double>(values), "BF16");
  out.add_as("d", {2, 2}, std::span<const double>(values), "F64");
  out.write(dir / "a.safetensors");
  const safetensors_reader in(dir / "a.safetensors");
  CHECK(in.entry("v").dtype == "F32");
  CHECK(in.entry("v").shape == std::vector<std::size_t>{4});
  const auto v = in.values<double>("v");
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(v[i] == double(float(values[i])));
  CHECK(in.entry("m").dtype == "BF16");
  CHECK(in.entry("m").shape == std::vector<std::size_t>{2, 2});
  CHECK(in.values<double>("m")[1] == -2.5);  // exact in BF16
  CHECK(in.values<double>("d") == values);
  safetensors_writer bad;
  const std::vector<double> huge{1e39};
  CHECK(message_of<numerical_error>([&] { bad.add_as("x", {1}, std::span<const double>(huge), "F32"); })
            .find("which F32 cannot hold") != std::string::npos);
  CHECK_THROWS_AS(bad.add_as("y", {3}, std::span<const double>(huge), "F32"), shape_error);
}

TEST_CASE("safetensors: a mapped file reads as the same file read whole") {
  scratch_dir dir;
  safetensors_writer out;
  out.add("w", coded<double>(3, 2, 4));
  out.write(dir / "w.safetensors");
  const safetensors_reader read(dir / "w.safetensors"), mapped(dir / "w.safetensors", 0);
  CHECK_FALSE(read.mapped());
  CHECK(mapped.mapped());
  CHECK(same(mapped.tensor<double>("w"), coded<double>(3, 2, 4)));
  CHECK(mapped.bytes("w") == read.bytes("w"));
  const safetensors_reader copy = mapped;  // copies share the mapping
  CHECK(same(copy.tensor<double>("w"), coded<double>(3, 2, 4)));
  std::ofstream(dir / "empty.safetensors").close();
  CHECK(message_of<io_error>([&] { safetensors_reader(dir / "empty.safetensors", 0); }).find("too short") !=
        std::string::npos);
}

namespace {
void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}
}  // namespace

TEST_CASE("safetensors: a sharded checkpoint reads through its index; every disagreement is refused") {
  scratch_dir dir;
  safetensors_writer one, two;
  one.add("a.w", coded<float>(2, 2, 2));
  const std::vector<float> bias{1.5f, -2.5f};
  two.add("b.bias", {2}, std::span<const float>(bias));
  two.add("b.w", coded<float>(1, 3, 2));
  one.write(dir / "model-00001-of-00002.safetensors");
  two.write(dir / "model-00002-of-00002.safetensors");
  write_text(dir / "model.safetensors.index.json",
             R"({"metadata": {"total_size": 64}, "weight_map": {"a.w": "model-00001-of-00002.safetensors",
                 "b.w": "model-00002-of-00002.safetensors", "b.bias": "model-00002-of-00002.safetensors"}})");
  const safetensors_shards in(dir / "model.safetensors.index.json");
  CHECK(in.shard_count() == 2);
  CHECK(in.names().size() == 3);
  CHECK(in.metadata().at("total_size") == "64");
  CHECK(same(in.shard("b.w").tensor<float>("b.w"), coded<float>(1, 3, 2)));
  tensor3<float> a(2, 2, 2);
  in.load_into("a.w", a);
  CHECK(same(a, coded<float>(2, 2, 2)));
  CHECK(in.values<float>("b.bias") == bias);
  CHECK(message_of<io_error>([&] { (void)in.entry("c.w"); }).find("no tensor named 'c.w'") != std::string::npos);

  const auto refused = [&](const std::string& index) {
    write_text(dir / "bad.index.json", index);
    return message_of<io_error>([&] { safetensors_shards(dir / "bad.index.json"); });
  };
  CHECK(refused(R"({"weight_map": {"a.w": "model-00002-of-00002.safetensors",
                   "b.w": "model-00002-of-00002.safetensors", "b.bias": "model-00002-of-00002.safetensors"}})")
            .find("puts 'a.w' in model-00002-of-00002.safetensors, which has no such tensor") != std::string::npos);
  CHECK(refused(R"({"weight_map": {"a.w": "model-00001-of-00002.safetensors",
                   "b.w": "model-00002-of-00002.safetensors"}})")
            .find("holds 'b.bias', which the weight map does not name") != std::string::npos);
  CHECK(refused(R"({"weight_map": {"a.w": "../model-00001-of-00002.safetensors"}})").find("file names in the index") !=
        std::string::npos);
  CHECK(refused(R"({"weight_map": {"a.w": "missing.safetensors"}})").find("missing.safetensors") != std::string::npos);
  CHECK(refused(R"({"metadata": {}})").find("no \"weight_map\"") != std::string::npos);
  CHECK(refused("{not json").find("not valid JSON") != std::string::npos);
  CHECK(message_of<io_error>([&] { safetensors_shards(dir / "none.index.json"); }).find("none.index.json") !=
        std::string::npos);
}
