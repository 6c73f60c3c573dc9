// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file boxes.hpp
/// @brief Where each rank holds a transform-domain tensor: boxes of slices × rows, and the routes between them and
/// the tube layout.
///
/// A rank holds boxes: rows first_row … first_row + rows − 1 of every column of the stored slices first_slice …
/// first_slice + slices − 1, stored as a rows×n×slices column-major array. Two layouts:
///   slabs    whole slices, a block of them per rank (distributed::transformed: the L-SVD, QR and inverse need
///            whole slices);
///   pencils  the slices' rows stacked slice after slice and cut into equal blocks, one per rank (the product:
///            every rank computes an equal share of the facewise GEMMs, however few the stored slices). A rank's
///            block is at most three boxes: the end of one slice, whole slices, the start of another.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "tprod/distributed/detail/exchange.hpp"
#include "tprod/distributed/partition.hpp"
#include "tprod/transform/slice_window.hpp"

namespace tprod::distributed::detail {

/// @brief Rows first_row … of every column of the stored slices first_slice …, held as a rows×n×slices array.
struct slice_box {
  std::size_t first_slice = 0, slices = 0, first_row = 0, rows = 0;
  /// @brief The box's slices as a window of a tensor with `total` stored slices (no group: a box's facewise work
  /// needs no other rank).
  slice_window window(std::size_t total) const { return {first_slice, slices, total, nullptr}; }
};

/// @brief The boxes every rank holds.
class box_layout {
 public:
  /// @brief Rank r holds the whole slices slices.begin(r) … end(r) − 1 of an m-row tensor (one box, or none).
  static box_layout slabs(const block_partition& slices, std::size_t m) {
    box_layout layout(slices.parts());
    for (int r = 0; r < slices.parts(); ++r)
      if (slices.size(r) > 0) layout.boxes_[std::size_t(r)].push_back({slices.begin(r), slices.size(r), 0, m});
    return layout;
  }
  /// @brief The m rows of `slices` stored slices, stacked (row i of slice k is row k·m + i) and cut into `ranks`
  /// blocks whose sizes differ by at most one row.
  static box_layout pencils(std::size_t slices, std::size_t m, int ranks) {
    box_layout layout(ranks);
    const block_partition rows(slices * m, ranks);
    for (int r = 0; r < ranks; ++r) {
      for (std::size_t f = rows.begin(r), end = rows.end(r); f < end;) {
        const std::size_t k = f / m, i = f % m;
        if (i == 0 && end - f >= m) {  // whole slices
          const std::size_t whole = (end - f) / m;
          layout.boxes_[std::size_t(r)].push_back({k, whole, 0, m});
          f += whole * m;
        } else {  // part of one slice
          const std::size_t stop = std::min(end, (k + 1) * m);
          layout.boxes_[std::size_t(r)].push_back({k, 1, i, stop - f});
          f = stop;
        }
      }
    }
    return layout;
  }
  /// @brief The same slices with every row of a `rows`-row tensor (a product's right operand: the rows of A·B that
  /// a rank computes need all of B's slice).
  box_layout with_all_rows(std::size_t rows) const {
    box_layout layout = *this;
    for (auto& boxes : layout.boxes_)
      for (auto& box : boxes) box.first_row = 0, box.rows = rows;
    return layout;
  }
  const std::vector<slice_box>& of(int rank) const { return boxes_[std::size_t(rank)]; }

 private:
  explicit box_layout(int ranks) : boxes_(std::size_t(ranks)) {}
  std::vector<std::vector<slice_box>> boxes_;
};

/// @brief The blocks that carry what the tubes [b, e) of an m×n tensor hold of `box`, as pairs (tube side, box
/// side). Tube side: the transformed tubes as an (e − b)×(stored slices) column-major array; box side: the box's
/// array. Tube t = i + m·j holds row i of column j.
inline std::vector<std::pair<strided_block, strided_block>> box_runs(std::size_t b, std::size_t e, std::size_t m,
                                                                     std::size_t n, const slice_box& box) {
  std::vector<std::pair<strided_block, strided_block>> runs;
  const std::size_t held = e - b, r0 = box.first_row, rc = box.rows;
  if (held == 0 || rc == 0 || box.slices == 0) return runs;
  if (rc == m) {  // whole columns: the tubes are one run on both sides, per slice
    runs.push_back({{held, box.slices, held, held * box.first_slice}, {held, box.slices, m * n, b}});
    return runs;
  }
  // Column j's tubes in the box are m·j + r0 … m·j + r0 + rc − 1; the columns that meet [b, e):
  const std::size_t j_begin = b < r0 + rc ? 0 : (b - r0 - rc) / m + 1;
  const std::size_t j_end = std::min(n, e <= r0 ? 0 : (e - r0 + m - 1) / m);
  for (std::size_t k = 0; k < box.slices; ++k) {
    const std::size_t tube_slice = held * (box.first_slice + k), box_slice = rc * n * k;
    for (std::size_t j = j_begin; j < j_end;) {
      const std::size_t lo = std::max(m * j + r0, b), hi = std::min(m * j + r0 + rc, e);
      std::size_t columns = 1;  // a whole column of the box, and the whole ones after it, are one strided block
      if (hi - lo == rc)
        while (j + columns < j_end && m * (j + columns) + r0 + rc <= e) ++columns;
      runs.push_back({{hi - lo, columns, m, lo - b + tube_slice},
                      {hi - lo, columns, rc, lo - m * j - r0 + rc * j + box_slice}});
      j += columns;
    }
  }
  return runs;
}

/// @brief One tensor's routes between the tube layout (`tubes` over the ranks) and `layout`'s boxes, seen from
/// `rank`: tube_side[q] lists the blocks of this rank's transformed tubes that rank q's boxes hold; box_side[q] the
/// blocks of this rank's boxes (the box's index in layout.of(rank), the block) that rank q's tubes hold. The two
/// sides list a pair of ranks' blocks in the same order, so either can be the sender.
struct routes {
  std::vector<std::vector<strided_block>> tube_side;
  std::vector<std::vector<std::pair<std::size_t, strided_block>>> box_side;

  routes(const block_partition& tubes, std::size_t m, std::size_t n, const box_layout& layout, int rank)
      : tube_side(std::size_t(tubes.parts())), box_side(std::size_t(tubes.parts())) {
    for (int q = 0; q < tubes.parts(); ++q) {
      for (const auto& box : layout.of(q))
        for (const auto& run : box_runs(tubes.begin(rank), tubes.end(rank), m, n, box))
          tube_side[std::size_t(q)].push_back(run.first);
      const auto& mine = layout.of(rank);
      for (std::size_t i = 0; i < mine.size(); ++i)
        for (const auto& run : box_runs(tubes.begin(q), tubes.end(q), m, n, mine[i]))
          box_side[std::size_t(q)].push_back({i, run.second});
    }
  }

  /// @brief Appends the tube side's blocks of `tubes_hat` (this rank's transformed tubes) to each rank's message.
  template <class T>
  void add_tubes(messages<T>& out, T* tubes_hat) const {
    for (std::size_t q = 0; q < tube_side.size(); ++q)
      for (const auto& block : tube_side[q]) out[q].push_back({tubes_hat, block});
  }
  /// @brief Appends the box side's blocks of `boxes` (this rank's box arrays, in layout order) to each message.
  template <class T>
  void add_boxes(messages<T>& out, const std::vector<T*>& boxes) const {
    for (std::size_t q = 0; q < box_side.size(); ++q)
      for (const auto& [i, block] : box_side[q]) out[q].push_back({boxes[i], block});
  }
};

/// @brief One tensor in a move between the tube layout and its boxes: its routes, its transformed tubes and its box
/// arrays in layout order (the side the move reads is const).
template <class Tubes, class Box>
struct routed {
  const routes& r;
  Tubes* tubes;
  std::vector<Box*> boxes;
};

/// @brief Collective: every tensor's transformed tubes into its boxes, all in one all-to-all.
template <class D>
void to_boxes(const communicator& comm, const std::vector<routed<const D, D>>& tensors) {
  messages<const D> sends(std::size_t(comm.size()));
  messages<D> recvs(std::size_t(comm.size()));
  for (const auto& t : tensors) {
    t.r.add_tubes(sends, t.tubes);
    t.r.add_boxes(recvs, t.boxes);
  }
  exchange(comm, sends, recvs);
}

/// @brief Collective: every tensor's boxes back into its transformed tubes, all in one all-to-all.
template <class D>
void to_tubes(const communicator& comm, const std::vector<routed<D, const D>>& tensors) {
  messages<const D> sends(std::size_t(comm.size()));
  messages<D> recvs(std::size_t(comm.size()));
  for (const auto& t : tensors) {
    t.r.add_boxes(sends, t.boxes);
    t.r.add_tubes(recvs, t.tubes);
  }
  exchange(comm, sends, recvs);
}

}  // namespace tprod::distributed::detail
