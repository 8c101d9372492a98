// The model of the prefix kind: a block pool (block_pool_model) with tokens, a map from token prefix to block, LRU.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <vector>

#include "oracle/models/block_pool_model.h"

namespace kvconform {

/// A block pool whose sequences carry a token per row. A full block is registered under the whole
/// token prefix up to its end (a plain map: no hashing, so no collision), unless that prefix is
/// registered already. A registered block no table holds is evictable; the evictable blocks form a
/// list, least recently released first, and a release adds its blocks from the last to the first.
/// An append takes free blocks first, then evicts the least recently released.
///
/// Beyond the pool's refusals: an append's (and a prefill's) `shape` also for a token count other than the step
/// count, and its `capacity` when the free and evictable blocks together are too few.
class prefix_model final : public block_pool_model {
 public:
  prefix_model(const cache_config& c, const numeric_profile& p) : block_pool_model(c, p) {}

  const std::vector<std::int64_t>& tokens(std::int64_t h) const { return at(h).tokens; }
  /// Every token sequence a live or released sequence has held, oldest first (prefixes to look up again).
  const std::vector<std::vector<std::int64_t>>& history() const { return history_; }
  /// Released blocks still cached, which an append may evict.
  std::size_t evictable_blocks() const { return evictable_.size(); }

 private:
  using row = std::vector<double>;
  struct cached_block {
    std::vector<std::int64_t> prefix;  // the tokens up to the block's end
    std::vector<row> keys, values;     // its rows as given (the stream stores them again when found)
  };
  /// A sequence holding the cached full blocks of the longest cached prefix of o.tokens.
  void create(const op& o) override;
  bool well_formed(const op& o, std::size_t steps) const override { return o.tokens.size() == steps; }
  /// A free block when there is one, else the least recently released evictable one, which leaves
  /// the cache (its prefix is no longer found).
  std::int64_t take_block() override;
  /// The append's tokens, each full block registered as its last token arrives.
  void appended(sequence& s, const op& o, std::size_t from) override;
  void unheld(std::int64_t b) override;
  /// A registered block stays what its prefix says: a rollback that leaves it partly filled makes the next append
  /// copy it first (docs/kinds/prefix.md).
  bool frozen(std::int64_t b) const override { return cached_.count(b) != 0; }
  /// free_blocks, evictable_blocks and hit_rows.
  void count(snapshot& out) const override;
  void register_if_full(const sequence& s);

  std::map<std::vector<std::int64_t>, std::int64_t> registered_;  // token prefix -> block
  std::map<std::int64_t, cached_block> cached_;                   // registered block -> its prefix and rows
  std::list<std::int64_t> evictable_;                             // least recently released first
  std::vector<std::vector<std::int64_t>> history_;
  std::int64_t hit_rows_ = 0;
};

}  // namespace kvconform
