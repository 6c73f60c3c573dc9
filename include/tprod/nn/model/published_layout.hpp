// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file published_layout.hpp
/// @brief A model's parameters read from and written to a checkpoint in another library's names and layouts (a
/// Hugging Face checkpoint's), through a table of correspondences. Each row ties one of our m×n×1 parameters, or a
/// block of its columns, to one tensor of the checkpoint:
///
///   same:        ours(i, c₀ + j, 0) = theirs[i, j]   (a 2-D [m, n] array: GPT-2's Conv1D stores in × out, as we do)
///   transposed:  ours(i, c₀ + j, 0) = theirs[j, i]   (nn.Linear's out × in, nn.Embedding's V × d)
///   vector:      ours(0, c₀ + j, 0) = theirs[j]      (a bias or a LayerNorm scale, [n])
///
/// where the columns c₀ … c₀ + n − 1 are the block that a fused parameter takes from a separate tensor (BERT's query,
/// key and value as the three blocks of our w_qkv); c₀ = 0 and n = all columns otherwise. Two rows may read the same
/// tensor (a head tied to the embedding).
///
/// Loading is strict, as load_checkpoint is: every column of every parameter is covered by exactly one row; every
/// row's tensor is in the checkpoint with its shape and a dtype that converts exactly; every tensor of the
/// checkpoint is read by a row or is one the caller declares ignorable (a buffer such as GPT-2's causal mask);
/// all of it is checked from the header before the model changes. Saving writes each tensor once; a tensor that two rows
/// would write with different values is refused (an untied head saved as if it were tied).
/// Needs nlohmann-json: link tprod::io.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "tprod/io/safetensors.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

enum class published_layout {
  same,        ///< [m, n] ↔ m×n×1
  transposed,  ///< [n, m] ↔ m×n×1
  vector       ///< [n] ↔ 1×n×1
};

/// @brief One row of the table: our parameter (its for_each_parameter name), the checkpoint's tensor, the layout,
/// and the block of our columns it fills (columns = 0: all of them).
struct published_tensor {
  std::string ours;
  std::string theirs;
  published_layout layout = published_layout::same;
  std::size_t first_column = 0;
  std::size_t columns = 0;
};

namespace detail {

/// The checkpoint's shape of a row that fills `columns` columns of an m-row parameter.
inline std::vector<std::size_t> published_shape(published_layout layout, std::size_t m, std::size_t columns) {
  switch (layout) {
    case published_layout::same:
      return {m, columns};
    case published_layout::transposed:
      return {columns, m};
    case published_layout::vector:
      return {columns};
  }
  return {};
}

/// ours(i, c₀ + j, 0) ↔ c_order[…] as the layout says, copied in the direction `to_ours`. Our columns are stored
/// one after another (column-major), so a transposed tensor's C order is our block's own order (a straight copy)
/// and a same-layout one is its transpose (Eigen's blocked assignment).
template <class T>
void move_published_block(tensor3<T>& ours, const published_tensor& row, std::size_t columns, std::span<T> c_order,
                          bool to_ours) {
  using column_major = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using row_major = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto m = Eigen::Index(ours.m()), n = Eigen::Index(columns);
  Eigen::Map<column_major> block(ours.data() + row.first_column * ours.m(), m, n);
  if (row.layout == published_layout::transposed) {
    Eigen::Map<column_major> theirs(c_order.data(), m, n);
    if (to_ours)
      block = theirs;
    else
      theirs = block;
  } else {  // a transpose, tile by tile so that both sides stay in cache
    Eigen::Map<row_major> theirs(c_order.data(), m, n);
    constexpr Eigen::Index tile = 64;
    for (Eigen::Index j = 0; j < n; j += tile)
      for (Eigen::Index i = 0; i < m; i += tile) {
        const Eigen::Index rows = std::min(tile, m - i), cols = std::min(tile, n - j);
        if (to_ours)
          block.block(i, j, rows, cols) = theirs.block(i, j, rows, cols);
        else
          theirs.block(i, j, rows, cols) = block.block(i, j, rows, cols);
      }
  }
}

/// Our parameters by name, each a pointer to the value, in the model's visiting order.
template <std::floating_point T, layer<T> M>
std::map<std::string, layer_tensor<M, T>*> parameters_by_name(M& model) {
  std::map<std::string, layer_tensor<M, T>*> out;
  model.for_each_parameter(
      [&](std::string_view name, layer_tensor<M, T>& v, layer_tensor<M, T>&) { out.emplace(name, &v); });
  return out;
}

/// The row's parameter, checked to exist and to be a single-slice tensor whose columns hold the row's block;
/// returns the block's width.
template <class X>
std::size_t checked_block(const std::map<std::string, X*>& params, const published_tensor& row, const std::string& who) {
  const auto it = params.find(row.ours);
  if (it == params.end()) throw argument_error(who + ": the model has no parameter '" + row.ours + "'");
  const auto& x = *it->second;
  const std::size_t columns = row.columns == 0 ? x.n() : row.columns;
  TPROD_EXPECTS(x.p() == 1 && row.first_column + columns <= x.n() &&
                    (row.layout != published_layout::vector || x.m() == 1),
                who + ": parameter '" + row.ours + "' " + x.shape() + " cannot hold '" + row.theirs + "' in columns " +
                    std::to_string(row.first_column) + " + " + std::to_string(columns));
  return columns;
}

}  // namespace detail

/// @brief Loads `model`'s parameters from the checkpoint `r` (an io::safetensors_reader or io::safetensors_shards)
/// through `table`; a tensor of `r` that no row reads must satisfy `ignorable` (else it is refused), and a
/// parameter of ours that no row fills must satisfy `kept` (it keeps its value: a head the checkpoint lacks, drawn
/// fresh for fine-tuning).
/// Every name, shape and dtype is checked from the checkpoint's header before any data is read, so a checkpoint
/// that does not fit leaves the model as it was; then each tensor is read once, straight into the model's memory
/// (through a host copy for a model on the device).
/// @throws io_error naming the checkpoint and the tensor for a missing or unexpected tensor or a dtype that does
///         not convert exactly; shape_error naming both shapes; argument_error when the table leaves a column of a
///         parameter uncovered or covers one twice.
template <std::floating_point T, layer<T> M, class Reader>
void load_published(const Reader& r, M& model, const std::vector<published_tensor>& table,
                    const std::function<bool(std::string_view)>& ignorable = {},
                    const std::function<bool(std::string_view)>& kept = {}) {
  const std::string who = "nn::load_published(" + r.name() + ")";
  const auto params = detail::parameters_by_name<T>(model);
  std::map<std::string, std::vector<int>> covered;
  std::set<std::string> read;
  std::vector<std::size_t> widths;
  for (const auto& row : table) {
    const std::size_t columns = detail::checked_block(params, row, who);
    const auto& target = *params.at(row.ours);
    auto& cover = covered[row.ours];
    cover.resize(target.n());
    for (std::size_t j = 0; j < columns; ++j)
      if (cover[row.first_column + j]++)
        throw argument_error(who + ": two rows fill column " + std::to_string(row.first_column + j) + " of '" +
                             row.ours + "'");
    if (!r.contains(row.theirs))
      throw io_error(r.name() + ": has no tensor '" + row.theirs + "' (for tprod's '" + row.ours + "')");
    r.template expect<T>(row.theirs, detail::published_shape(row.layout, target.m(), columns));
    read.insert(row.theirs);
    widths.push_back(columns);
  }
  for (const auto& [name, x] : params) {
    const auto it = covered.find(name);
    if (it == covered.end() && kept && kept(name)) continue;
    if (it == covered.end() || std::count(it->second.begin(), it->second.end(), 0) > 0)
      throw argument_error(who + ": no row of the table fills all of tprod's parameter '" + name + "'");
  }
  for (const auto& name : r.names())
    if (!read.count(name) && !(ignorable && ignorable(name)))
      throw io_error(r.name() + ": tensor '" + name + "' has no place in the model");

  constexpr bool on_host = std::is_same_v<layer_space_t<M>, host_space>;
  std::map<std::string, tensor3<T>> staged;  // a model on the device is read into host copies first
  std::vector<T> scratch;                     // a same-layout tensor, to be transposed into our block
  for (std::size_t k = 0; k < table.size(); ++k) {
    const auto& row = table[k];
    tensor3<T>* ours = nullptr;
    if constexpr (on_host) {
      ours = params.at(row.ours);
    } else {
      const auto& target = *params.at(row.ours);
      ours = &staged.try_emplace(row.ours, target.m(), target.n(), 1, uninitialized).first->second;
    }
    const std::size_t m = ours->m(), columns = widths[k];
    const auto shape = detail::published_shape(row.layout, m, columns);
    if (row.layout == published_layout::same) {
      scratch.resize(m * columns);
      r.load_into(row.theirs, shape, std::span<T>(scratch));
      detail::move_published_block(*ours, row, columns, std::span<T>(scratch), true);
    } else {  // our block's column-major order is the tensor's C order
      r.load_into(row.theirs, shape, std::span<T>(ours->data() + row.first_column * m, m * columns));
    }
  }
  if constexpr (!on_host)
    for (auto& [name, value] : staged) *params.at(name) = detail::to_space<layer_space_t<M>>(std::move(value));
}

/// @brief Adds `model`'s parameters to `w` under the table's names and layouts, in `dtype` ("" for T's own, "F16",
/// "BF16"); each tensor once.
/// @throws argument_error when two rows give one tensor different values, or the table does not fit the model;
///         numerical_error for a value the half format cannot hold.
template <std::floating_point T, layer<T> M>
void add_published(io::safetensors_writer& w, M& model, const std::vector<published_tensor>& table,
                   std::string_view dtype = {}) {
  const std::string who = "nn::add_published";
  const auto params = detail::parameters_by_name<T>(model);
  std::map<std::string, std::vector<T>> written;
  for (const auto& row : table) {
    const std::size_t columns = detail::checked_block(params, row, who);
    tensor3<T> ours = detail::on_host(*params.at(row.ours));
    std::vector<T> values(ours.m() * columns);
    detail::move_published_block(ours, row, columns, std::span<T>(values), false);
    const auto shape = detail::published_shape(row.layout, ours.m(), columns);
    if (const auto it = written.find(row.theirs); it != written.end()) {
      if (it->second != values)
        throw argument_error(who + ": tensor '" + row.theirs + "' would hold two different parameters (tied in the " +
                             "table, different in the model; untie them in the table)");
      continue;
    }
    if (dtype.empty())
      w.add(row.theirs, shape, std::span<const T>(values));
    else
      w.add_as(row.theirs, shape, std::span<const T>(values), dtype);
    written.emplace(row.theirs, std::move(values));
  }
}

}  // namespace tprod::nn
