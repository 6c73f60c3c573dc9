// SPDX-License-Identifier: Apache-2.0
// tprod compress-attention: TensorLLM's shared-factor multi-head Tucker (nn::compress_attention) on the attention
// weights of a safetensors checkpoint written by tprod's models, computed in double precision and written back in
// the file's dtype; every other tensor and the metadata are copied byte for byte.
//   tprod compress-attention WEIGHTS -o OUT --heads H (--ranks R1,R2,R3 | --tol E) [--layers 0,3,...] [--max-sweeps N]
#include <algorithm>
#include <charconv>
#include <map>

#include "cli.hpp"
#include "tprod/decomp/extern_templates.hpp"  // compiled once, in tprod::instances
#include "tprod/io/safetensors.hpp"
#include "tprod/nn/model/compress_attention.hpp"

namespace tprod::cli {

namespace {

const std::string layer_prefix = "encoder.", qkv_suffix = ".attn.w_qkv", o_suffix = ".attn.w_o";

std::string qkv_name(std::size_t layer) { return layer_prefix + std::to_string(layer) + qkv_suffix; }
std::string o_name(std::size_t layer) { return layer_prefix + std::to_string(layer) + o_suffix; }

/// The indices i of the tensors named encoder.<i>.attn.w_qkv, ascending.
std::vector<std::size_t> attention_layers(const io::safetensors_reader& file) {
  std::vector<std::size_t> layers;
  for (const std::string& name : file.names()) {
    if (!name.starts_with(layer_prefix) || !name.ends_with(qkv_suffix)) continue;
    const char* first = name.data() + layer_prefix.size();
    const char* last = name.data() + name.size() - qkv_suffix.size();
    std::size_t i = 0;
    const auto [end, ec] = std::from_chars(first, last, i);
    if (first < last && ec == std::errc() && end == last && qkv_name(i) == name) layers.push_back(i);
  }
  std::sort(layers.begin(), layers.end());
  return layers;
}

/// The layers to compress: --layers, checked against the file, or every attention layer it has.
std::vector<std::size_t> chosen_layers(const invocation& inv, const io::safetensors_reader& file) {
  const auto present = attention_layers(file);
  if (present.empty())
    throw data_error(file.name() + ": has no attention layers (no tensor named " + layer_prefix + "<i>" + qkv_suffix +
                     ", as the examples' checkpoints have)");
  if (!inv.has("layers")) return present;
  std::string have;
  for (std::size_t i : present) have += (have.empty() ? "" : ", ") + std::to_string(i);
  const auto layers = parse_count_list(inv, "layers", 0);
  for (std::size_t i : layers)
    if (!std::binary_search(present.begin(), present.end(), i))
      throw data_error(file.name() + ": --layers " + std::to_string(i) + ": there is no tensor '" + qkv_name(i) +
                       "' (the file's attention layers are " + have + ")");
  return layers;
}

/// One layer's compression, written back as its two tensors in the file's scalar T.
template <std::floating_point T>
struct compressed_layer {
  nn::attention_compression result;
  tensor3<T> w_qkv, w_o;
};

template <std::floating_point T>
compressed_layer<T> compress_layer(const io::safetensors_reader& file, std::size_t layer, std::size_t heads,
                                   const tucker_options& options) {
  compressed_layer<T> c{{}, file.tensor<T>(qkv_name(layer)), file.tensor<T>(o_name(layer))};
  const std::string where = file.name() + ": " + layer_prefix + std::to_string(layer) + ".attn";
  const tprod::attention_weights<T> original = about(where, [&] { return nn::attention_weights_of(c.w_qkv, c.w_o); });
  const std::size_t d = c.w_o.m();
  if (d % heads != 0)
    throw data_error(where + ": --heads " + std::to_string(heads) + " does not divide its width d = " +
                     std::to_string(d));
  const std::size_t bounds[] = {d, d / heads, 4};
  for (std::size_t k = 0; k < options.ranks.size(); ++k)
    if (options.ranks[k] > bounds[k])
      throw data_error(where + ": --ranks R" + std::to_string(k + 1) + " = " + std::to_string(options.ranks[k]) +
                       " is outside 1.." + std::to_string(bounds[k]) + " (R1 <= d = " + std::to_string(d) +
                       ", R2 <= d_v = d/H = " + std::to_string(bounds[1]) + ", R3 <= 4)");
  tprod::attention_weights<double> w{original.query.template cast<double>(), original.key.template cast<double>(),
                                     original.value.template cast<double>(), original.output.template cast<double>()};
  c.result = about(where, [&] { return nn::compress_attention(w, heads, options); });
  c.result.layer = layer;
  const tprod::attention_weights<T> written{w.query.template cast<T>(), w.key.template cast<T>(),
                                            w.value.template cast<T>(), w.output.template cast<T>()};
  nn::set_attention_weights(c.w_qkv, c.w_o, written);
  c.result.relative_error = nn::relative_errors(original, written);  // of the weights as written (rounded to T)
  return c;
}

/// Compresses the chosen layers, all before writing anything; writes OUT with every other tensor copied.
template <std::floating_point T>
std::vector<nn::attention_compression> compress_file(const io::safetensors_reader& file,
                                                     const std::vector<std::size_t>& layers, std::size_t heads,
                                                     const tucker_options& options, const std::string& output) {
  std::map<std::string, tensor3<T>> replaced;
  std::vector<nn::attention_compression> results;
  for (std::size_t layer : layers) {
    compressed_layer<T> c = compress_layer<T>(file, layer, heads, options);
    results.push_back(c.result);
    replaced.emplace(qkv_name(layer), std::move(c.w_qkv));
    replaced.emplace(o_name(layer), std::move(c.w_o));
  }
  io::safetensors_writer out;
  for (const std::string& name : file.names()) {
    if (const auto it = replaced.find(name); it != replaced.end())
      out.add(name, it->second);
    else
      out.add_bytes(name, file.entry(name).dtype, file.entry(name).shape, file.bytes(name));
  }
  for (const auto& [key, value] : file.metadata()) out.set_metadata(key, value);
  out.write(output);
  return results;
}

void print_layer(std::ostream& out, const nn::attention_compression& r) {
  const auto& e = r.relative_error;
  out << "{\"layer\": " << r.layer << ", \"compression_ratio\": " << json_number(r.compression_ratio)
      << ", \"relative_error\": {\"q\": " << json_number(e.query) << ", \"k\": " << json_number(e.key)
      << ", \"v\": " << json_number(e.value) << ", \"o\": " << json_number(e.output)
      << "}, \"ranks\": " << json_counts(r.ranks) << "}\n";
}

}  // namespace

command compress_attention_command() {
  return {"compress-attention",
          "WEIGHTS -o OUT --heads H (--ranks R1,R2,R3 | --tol E) [--layers I,J,...] [--max-sweeps N]",
          "TensorLLM: shared-factor multi-head Tucker of a checkpoint's attention weights",
          "Denoises and compresses the multi-head attention of a standard Transformer checkpoint (safetensors, as\n"
          "tprod's examples write it): in each chosen layer i, W^Q, W^K, W^V (the three d x d blocks of\n"
          "encoder.i.attn.w_qkv, shape (d, 3d, 1)) and W^O (encoder.i.attn.w_o, shape (d, d, 1)) are tensorized per\n"
          "head into W_all (d x d_v x 4 x H, d_v = d/H), decomposed by HOOI with factor matrices shared by all heads\n"
          "(ranks R1 <= d, R2 <= d_v, R3 <= 4, or chosen so that ||W_all - What||_F <= E ||W_all||_F) and replaced by\n"
          "the reconstruction (TensorLLM, Gu et al. 2025). Writes OUT with the same tensors, dtypes and metadata;\n"
          "only the chosen layers' w_qkv and w_o change, all else is copied byte for byte. Prints one line per layer:\n"
          "{\"layer\": i, \"compression_ratio\": c, \"relative_error\": {\"q\": e, \"k\": e, \"v\": e, \"o\": e},\n"
          "\"ranks\": [R1, R2, R3]}: c = 4 d^2 / (H R1 R2 R3 + d R1 + d_v R2 + 4 R3), e = ||What - W||_F / ||W||_F of\n"
          "each matrix as written. Computes in double precision; F32 tensors are written as F32.",
          {"WEIGHTS"},
          {output_option("the output checkpoint (may be WEIGHTS itself)", "OUT"),
           {"heads", 0, "H", "attention heads per layer; H divides the width d", true},
           {"ranks", 0, "R1,R2,R3", "Tucker ranks, 1 <= R1 <= d, 1 <= R2 <= d/H, 1 <= R3 <= 4", false},
           {"tol", 0, "E", "relative error bound of W_all per layer, 0 <= E < 1", false},
           {"layers", 0, "I,J,...", "encoder layers to compress (default: every one in the file)", false},
           {"max-sweeps", 0, "N", "at most N HOOI sweeps after the HOSVD start (default 50; fewer when the fit gains "
                                  "less than 1e-10 in a sweep)", false}},
          [](const invocation& inv, std::ostream& out) {
            const std::size_t heads = parse_count(inv, "heads");
            tucker_options options;
            if (one_of(inv, "ranks", "tol") == "ranks") {
              options.ranks = parse_count_list(inv, "ranks");
              if (options.ranks.size() != 3)
                throw usage_error(inv.prefix() + "--ranks takes three ranks R1,R2,R3 (modes d, d_v, 4), got '" +
                                  inv.value("ranks") + "'");
              // Factors from the Gram matrices' SVD: about three times faster on these wide unfoldings (768 x 3072
              // for BERT-base); it resolves singular values only down to about 1e-8 sigma_1, which can matter for a
              // tolerance but not for given ranks.
              options.subspace = subspace_method::gram;
            } else {
              options.tolerance = parse_real(inv, "tol", 0.0, std::nextafter(1.0, 0.0), false);
            }
            if (inv.has("max-sweeps")) options.max_sweeps = parse_count(inv, "max-sweeps");
            if (inv.has("layers")) {
              auto layers = parse_count_list(inv, "layers", 0);
              std::sort(layers.begin(), layers.end());
              if (std::adjacent_find(layers.begin(), layers.end()) != layers.end())
                throw usage_error(inv.prefix() + "--layers names a layer twice: '" + inv.value("layers") + "'");
            }
            const io::safetensors_reader file(inv.input(0));
            // A checkpoint that records its heads (nn::to_metadata) must agree: a wrong H would split the
            // projections into the wrong heads and still write a result.
            if (const auto it = file.metadata().find("heads");
                it != file.metadata().end() && it->second != std::to_string(heads))
              throw data_error(file.name() + ": its metadata says heads = " + it->second + ", but --heads is " +
                               std::to_string(heads));
            const auto layers = chosen_layers(inv, file);
            // The layers' dtype: every w_qkv and w_o of them F32, or every one F64.
            const std::string dtype = file.entry(qkv_name(layers.front())).dtype;
            for (std::size_t i : layers)
              for (const std::string& name : {qkv_name(i), o_name(i)})
                if (const std::string have = file.entry(name).dtype;
                    have != dtype || (have != "F32" && have != "F64"))
                  throw data_error(file.name() + ": tensor '" + name + "' holds " + have + " data; the attention " +
                                   "weights must be all F32 or all F64 (" + qkv_name(layers.front()) + " is " + dtype +
                                   ")");
            const std::string& output = inv.value("output");
            const auto results = dtype == "F32" ? compress_file<float>(file, layers, heads, options, output)
                                                : compress_file<double>(file, layers, heads, options, output);
            for (const auto& r : results) print_layer(out, r);
          }};
}

}  // namespace tprod::cli
