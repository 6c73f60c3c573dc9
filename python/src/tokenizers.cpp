// SPDX-License-Identifier: Apache-2.0
// Tokenizers from Python: tprod.GPT2Tokenizer is io::bpe_tokenizer (GPT-2's byte-level BPE) on GPT-2's files,
// tprod.BertTokenizer io::wordpiece_tokenizer (BERT's WordPiece) on a vocab.txt.
#include <cstdint>
#include <optional>

#include "arrays.hpp"
#include "tprod/io/bpe_tokenizer.hpp"
#include "tprod/io/wordpiece_tokenizer.hpp"

namespace tprod::python {

namespace {
py::array_t<std::int64_t> int64_array(const std::vector<std::size_t>& ids) {
  py::array_t<std::int64_t> out(py::ssize_t(ids.size()));
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

/// A 1-D integer array's values as ids (each non-negative).
std::vector<std::size_t> ids_of(const py::array& ids, const char* who) {
  const char kind = ids.dtype().kind();
  if ((kind != 'i' && kind != 'u') || ids.ndim() != 1)
    throw py::type_error(std::string(who) + ": ids must be a 1-D integer array, got dtype " + dtype_text(ids.dtype()) +
                         " and shape " + shape_text(ids));
  const auto values = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(ids);
  std::vector<std::size_t> v(std::size_t(values.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (values.data()[i] < 0)
      throw py::value_error(std::string(who) + ": id " + std::to_string(values.data()[i]) + " at position " +
                            std::to_string(i) + " is negative");
    v[i] = std::size_t(values.data()[i]);
  }
  return v;
}
}  // namespace

void bind_tokenizers(py::module_& m) {
  py::class_<io::wordpiece_tokenizer, std::shared_ptr<io::wordpiece_tokenizer>>(m, "_WordPieceTokenizer")
      .def(py::init([](const std::string& vocabulary, bool lower_case) {
             return without_gil([&] { return std::make_shared<io::wordpiece_tokenizer>(vocabulary, lower_case); });
           }),
           py::arg("vocabulary"), py::arg("lower_case"))
      .def_static(
          "from_folder",
          [](const std::string& folder) {
            return without_gil(
                [&] { return std::make_shared<io::wordpiece_tokenizer>(io::wordpiece_tokenizer::from_folder(folder)); });
          },
          py::arg("folder"))
      .def("size", &io::wordpiece_tokenizer::size)
      .def("lower_case", &io::wordpiece_tokenizer::lower_case)
      .def("id", &io::wordpiece_tokenizer::id, py::arg("token"))
      .def("token", &io::wordpiece_tokenizer::token, py::arg("id"))
      .def(
          "tokenize",
          [](const io::wordpiece_tokenizer& t, const std::string& text) {
            return without_gil([&] { return t.tokenize(text); });
          },
          py::arg("text"))
      .def(
          "ids",
          [](const io::wordpiece_tokenizer& t, const std::string& text) {
            return int64_array(without_gil([&] { return t.ids(text); }));
          },
          py::arg("text"))
      .def(
          "encode",
          [](const io::wordpiece_tokenizer& t, const std::string& first, const std::optional<std::string>& second,
             std::size_t max_length) {
            auto in = without_gil([&] {
              return t.encode(first, second ? std::optional<std::string_view>(*second) : std::nullopt, max_length);
            });
            return py::make_tuple(int64_array(in.ids), int64_array(in.segments));
          },
          py::arg("first"), py::arg("second"), py::arg("max_length"))
      .def(
          "decode",
          [](const io::wordpiece_tokenizer& t, const py::array& ids) {
            return t.decode(ids_of(ids, "tprod.BertTokenizer.decode"));
          },
          py::arg("ids"));

  py::class_<io::bpe_tokenizer, std::shared_ptr<io::bpe_tokenizer>>(m, "_BPETokenizer")
      .def(py::init([](const std::string& encoder, const std::string& merges) {
             return without_gil([&] { return std::make_shared<io::bpe_tokenizer>(encoder, merges); });
           }),
           py::arg("encoder"), py::arg("merges"))
      .def_static(
          "from_folder",
          [](const std::string& folder) {
            return without_gil([&] { return std::make_shared<io::bpe_tokenizer>(io::bpe_tokenizer::from_folder(folder)); });
          },
          py::arg("folder"))
      .def("size", &io::bpe_tokenizer::size)
      .def("id", &io::bpe_tokenizer::id, py::arg("symbol"))
      .def(
          "encode",
          [](const io::bpe_tokenizer& t, const std::string& text) {
            return int64_array(without_gil([&] { return t.encode(text); }));
          },
          py::arg("text"))
      .def(
          "decode",
          [](const io::bpe_tokenizer& t, const py::array& ids) {
            return py::bytes(t.decode(ids_of(ids, "tprod.GPT2Tokenizer.decode")));
          },
          py::arg("ids"))
      .def("pieces", &io::bpe_tokenizer::pieces, py::arg("text"));
}

}  // namespace tprod::python
