// SPDX-License-Identifier: Apache-2.0
// Tokenizers from Python: tprod.GPT2Tokenizer is io::bpe_tokenizer (GPT-2's byte-level BPE) on GPT-2's files.
#include <cstdint>

#include "arrays.hpp"
#include "tprod/io/bpe_tokenizer.hpp"

namespace tprod::python {

void bind_tokenizers(py::module_& m) {
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
            auto ids = without_gil([&] { return t.encode(text); });
            py::array_t<std::int64_t> out(py::ssize_t(ids.size()));
            std::copy(ids.begin(), ids.end(), out.mutable_data());
            return out;
          },
          py::arg("text"))
      .def(
          "decode",
          [](const io::bpe_tokenizer& t, const py::array& ids) {
            const char kind = ids.dtype().kind();
            if ((kind != 'i' && kind != 'u') || ids.ndim() != 1)
              throw py::type_error("tprod.GPT2Tokenizer.decode: ids must be a 1-D integer array, got dtype " +
                                   dtype_text(ids.dtype()) + " and shape " + shape_text(ids));
            const auto values = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(ids);
            std::vector<std::size_t> v(std::size_t(values.size()));
            for (std::size_t i = 0; i < v.size(); ++i) {
              if (values.data()[i] < 0)
                throw py::value_error("tprod.GPT2Tokenizer.decode: id " + std::to_string(values.data()[i]) +
                                      " at position " + std::to_string(i) + " is negative");
              v[i] = std::size_t(values.data()[i]);
            }
            return py::bytes(t.decode(v));
          },
          py::arg("ids"))
      .def("pieces", &io::bpe_tokenizer::pieces, py::arg("text"));
}

}  // namespace tprod::python
