// acme's block pool: the storage, block tables and reads its paged and prefix caches share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "acme_support.h"

namespace acme {

/// A sequence's rows gathered through its block table on every read: its blocks are scattered
/// over the pool, and copying them out on each look would cost what paging saves.
struct block_view {
  const double* pool;
  const std::vector<std::size_t>* table;
  std::size_t block_size, n, width;
  std::ptrdiff_t rows() const { return static_cast<std::ptrdiff_t>(n); }
  std::ptrdiff_t cols() const { return static_cast<std::ptrdiff_t>(width); }
  const double* row(std::size_t i) const {
    return pool + ((*table)[i / block_size] * block_size + i % block_size) * width;
  }
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return row(static_cast<std::size_t>(i))[j]; }
};

/// num_blocks blocks of block_size rows and the sequences that hold them (Sequence has `blocks` and `len`).
/// fork shares every block of its parent (counts go up, nothing is copied); the caches decide how blocks are
/// taken and given back.
template <class Sequence>
class block_pool {
 public:
  using sequence_id = std::uint32_t;

  block_pool(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : bs_(block_size),
        dk_(d_k),
        dv_(d_v),
        keys_(num_blocks * block_size * d_k),
        values_(num_blocks * block_size * d_v),
        refs_(num_blocks, 0) {
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  /// Empty for an unknown sequence: acme callers only ask whether they got an id.
  std::optional<sequence_id> fork(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return std::nullopt;
    for (std::size_t b : it->second.blocks) ++refs_[b];
    seqs_[next_] = it->second;
    return next_++;
  }

  /// Reads the rows in place through the block table.
  result<decoded> decode_step(sequence_id s, kvconform::array_view q) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return code::no_such;
    if (q.rank != 1 || q.dims[0] != dk_) return code::bad_shape;
    if (it->second.len == 0) return code::empty;
    const block_view k = keys(s), v = values(s);
    return attend(
        it->second.len, dk_, dv_, q.data, [&](std::size_t i) { return k.row(i); },
        [&](std::size_t i) { return v.row(i); });
  }

  /// An unknown sequence has no rows, and no blocks below.
  block_view keys(sequence_id s) const { return view(keys_, dk_, s); }
  block_view values(sequence_id s) const { return view(values_, dv_, s); }
  const std::vector<std::size_t>& block_table(sequence_id s) const {
    const auto it = seqs_.find(s);
    return it == seqs_.end() ? no_blocks_ : it->second.blocks;
  }
  std::size_t num_blocks() const { return refs_.size(); }
  std::size_t free_blocks() const { return free_.size(); }
  std::size_t ref_count(std::size_t block) const { return block < refs_.size() ? refs_[block] : 0; }

 protected:
  /// Whether an append into q must first copy its last block: partly filled and held by another table too.
  bool must_copy(const Sequence& q) const { return q.len % bs_ != 0 && refs_[q.blocks.back()] > 1; }
  /// The blocks an append of n rows into q takes: a copy of the shared last block, then new blocks.
  std::size_t blocks_needed(const Sequence& q, std::size_t n) const {
    const std::size_t room = q.blocks.size() * bs_ - q.len;
    return (must_copy(q) ? 1 : 0) + (n > room ? (n - room + bs_ - 1) / bs_ : 0);
  }
  /// Copies q's partly filled last block into the block `to` and puts that in its place.
  void copy_last_block(Sequence& q, std::size_t to) {
    const std::size_t from = q.blocks.back(), filled = q.len % bs_;
    std::copy_n(row(keys_, dk_, from * bs_), filled * dk_, row(keys_, dk_, to * bs_));
    std::copy_n(row(values_, dv_, from * bs_), filled * dv_, row(values_, dv_, to * bs_));
    --refs_[from];
    q.blocks.back() = to;
  }
  /// Writes step i of k and v as q's next row, into the last block of its table (which has room).
  void write_row(Sequence& q, kvconform::array_view k, kvconform::array_view v, std::size_t i) {
    const std::size_t slot = q.blocks.back() * bs_ + q.len % bs_;
    std::copy_n(k.data + i * dk_, dk_, row(keys_, dk_, slot));
    std::copy_n(v.data + i * dv_, dv_, row(values_, dv_, slot));
    ++q.len;
  }

  std::size_t bs_, dk_, dv_;
  std::vector<double> keys_, values_;  // the pool: block b holds rows [b * bs, (b + 1) * bs)
  std::vector<std::size_t> refs_;      // per block: the tables that hold it
  std::vector<std::size_t> free_;      // blocks no table holds (and, for prefix, none caches)
  std::map<sequence_id, Sequence> seqs_;
  sequence_id next_ = 0;

 private:
  static double* row(std::vector<double>& pool, std::size_t width, std::size_t slot) {
    return pool.data() + slot * width;
  }
  block_view view(const std::vector<double>& pool, std::size_t width, sequence_id s) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return {pool.data(), &no_blocks_, bs_, 0, width};
    return {pool.data(), &it->second.blocks, bs_, it->second.len, width};
  }
  std::vector<std::size_t> no_blocks_;
};

}  // namespace acme
