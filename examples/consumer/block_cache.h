// acme's paged KV cache (kvconform kind paged): a block pool shared through block tables, with status returns.
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

/// num_blocks blocks of block_size rows. fork shares every block of its parent (counts go up,
/// nothing is copied); the first append into a shared, partly filled last block copies that block
/// (copy-on-write), since both sequences would otherwise write the same slots. Every refusal is
/// decided before the first change, so a refused call changes nothing. No preemption: a full pool
/// refuses (kvconform reports its preemption property as NOT SUPPORTED).
class block_cache {
 public:
  using sequence_id = std::uint32_t;

  block_cache(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : bs_(block_size),
        dk_(d_k),
        dv_(d_v),
        keys_(num_blocks * block_size * d_k),
        values_(num_blocks * block_size * d_v),
        refs_(num_blocks, 0) {
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  /// Never refused: a new sequence holds no block until it is written.
  sequence_id create() {
    seqs_[next_] = {};
    return next_++;
  }

  /// Empty for an unknown sequence: acme callers only ask whether they got an id.
  std::optional<sequence_id> fork(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return std::nullopt;
    for (std::size_t b : it->second.blocks) ++refs_[b];
    seqs_[next_] = it->second;
    return next_++;
  }

  status release(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    for (std::size_t b : it->second.blocks)
      if (--refs_[b] == 0) free_.push_back(b);
    seqs_.erase(it);
    return {};
  }

  status append(sequence_id s, kvconform::array_view k, kvconform::array_view v) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    const auto n = append_steps(k, v, dk_, dv_);
    if (!n) return status(code::bad_shape);
    if (*n == 0) return {};
    sequence& q = it->second;
    const bool copy = must_copy(q);
    const std::size_t room = q.blocks.size() * bs_ - q.len;
    const std::size_t need = (copy ? 1 : 0) + (*n > room ? (*n - room + bs_ - 1) / bs_ : 0);
    if (need > free_.size()) return status(code::full);
    if (copy) {
      const std::size_t from = q.blocks.back(), to = take();
      const std::size_t filled = q.len % bs_;
      copy_rows(keys_, dk_, from, to, filled);
      copy_rows(values_, dv_, from, to, filled);
      --refs_[from];
      q.blocks.back() = to;
    }
    for (std::size_t i = 0; i < *n; ++i, ++q.len) {
      if (q.len % bs_ == 0) q.blocks.push_back(take());
      const std::size_t slot = q.blocks[q.len / bs_] * bs_ + q.len % bs_;
      std::copy(k.data + i * dk_, k.data + (i + 1) * dk_, keys_.begin() + static_cast<std::ptrdiff_t>(slot * dk_));
      std::copy(v.data + i * dv_, v.data + (i + 1) * dv_, values_.begin() + static_cast<std::ptrdiff_t>(slot * dv_));
    }
    return {};
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

  std::size_t num_blocks() const { return refs_.size(); }
  std::size_t free_blocks() const { return free_.size(); }
  const std::vector<std::size_t>& block_table(sequence_id s) const {
    const auto it = seqs_.find(s);
    return it == seqs_.end() ? no_blocks_ : it->second.blocks;
  }
  std::size_t ref_count(std::size_t block) const { return block < refs_.size() ? refs_[block] : 0; }
  /// Only blocks handed out count: nothing is reserved per sequence.
  std::size_t bytes_in_use() const { return (num_blocks() - free_blocks()) * bs_ * (dk_ + dv_) * sizeof(double); }

 private:
  struct sequence {
    std::vector<std::size_t> blocks;
    std::size_t len = 0;
  };

  bool must_copy(const sequence& q) const { return q.len % bs_ != 0 && refs_[q.blocks.back()] > 1; }
  /// Callers have checked that enough blocks are free.
  std::size_t take() {
    const std::size_t b = free_.back();
    free_.pop_back();
    refs_[b] = 1;
    return b;
  }
  void copy_rows(std::vector<double>& pool, std::size_t width, std::size_t from, std::size_t to, std::size_t n) {
    const auto at = [&](std::size_t block) { return pool.begin() + static_cast<std::ptrdiff_t>(block * bs_ * width); };
    std::copy(at(from), at(from) + static_cast<std::ptrdiff_t>(n * width), at(to));
  }
  block_view view(const std::vector<double>& pool, std::size_t width, sequence_id s) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return {pool.data(), &no_blocks_, bs_, 0, width};
    return {pool.data(), &it->second.blocks, bs_, it->second.len, width};
  }

  std::size_t bs_, dk_, dv_;
  std::vector<double> keys_, values_;  // the pool: block b holds rows [b * bs, (b + 1) * bs)
  std::vector<std::size_t> refs_;      // per block: the tables that hold it
  std::vector<std::size_t> free_;      // blocks no table holds
  std::map<sequence_id, sequence> seqs_;
  sequence_id next_ = 0;
  std::vector<std::size_t> no_blocks_;
};

}  // namespace acme
