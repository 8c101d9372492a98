// acme's paged KV cache (kvconform kind paged): a block pool shared through block tables, with status returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "acme_support.h"
#include "block_pool.h"

namespace acme {

struct block_sequence {
  std::vector<std::size_t> blocks;
  std::size_t len = 0;
};

/// acme's block pool (block_pool.h) with plain blocks: the first append into a shared, partly filled last block
/// copies that block (copy-on-write), since both sequences would otherwise write the same slots. Every refusal is
/// decided before the first change, so a refused call changes nothing. No preemption: a full pool refuses
/// (kvconform reports its preemption property as NOT SUPPORTED).
class block_cache : public block_pool<block_sequence> {
 public:
  using block_pool::block_pool;

  /// Never refused: a new sequence holds no block until it is written.
  sequence_id create() {
    seqs_[next_] = {};
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
    block_sequence& q = it->second;
    if (blocks_needed(q, *n) > free_.size()) return status(code::full);
    if (must_copy(q)) copy_last_block(q, take());
    for (std::size_t i = 0; i < *n; ++i) {
      if (q.len % bs_ == 0) q.blocks.push_back(take());
      write_row(q, k, v, i);
    }
    return {};
  }

  /// Only blocks handed out count: nothing is reserved per sequence.
  std::size_t bytes_in_use() const { return (num_blocks() - free_blocks()) * bs_ * (dk_ + dv_) * sizeof(double); }

 private:
  /// Callers have checked that enough blocks are free.
  std::size_t take() {
    const std::size_t b = free_.back();
    free_.pop_back();
    refs_[b] = 1;
    return b;
  }
};

}  // namespace acme
