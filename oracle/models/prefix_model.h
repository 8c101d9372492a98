// The model of the prefix kind: sequences of exact rows and tokens, abstract blocks, a map from token prefix to block,
// LRU.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Sequences by trace handle (the count of create and fork ops before them), each with its exact
/// rows, its tokens and a table of abstract block ids (fresh numbers, never reused: snapshots
/// compare them up to renaming). A full block is registered under the whole token prefix up to
/// its end (a plain map: no hashing, so no collision), unless that prefix is registered already.
/// A registered block no table holds is evictable; the evictable blocks form a list, least
/// recently released first, and a release adds its blocks from the last to the first.
///
/// Refusals: append `index` for a handle that names no live sequence, `shape` for malformed k/v
/// or a token count other than the step count (either one when both hold), `capacity` when the
/// free and evictable blocks together are too few; decode `index`, `shape`, `empty`; fork and
/// release `index`. create is never refused.
class prefix_model final : public model {
 public:
  prefix_model(const cache_config& c, const numeric_profile& p) : config_(c), profile_(p) {}

  expectation apply(const op& o) override;
  /// One stream "seq H" per live handle in handle order (rows and block table), counters
  /// free_blocks, evictable_blocks and hit_rows, and every held block's reference count.
  snapshot observe() const override;

  const cache_config& config() const { return config_; }
  /// Live handles, oldest first.
  std::vector<std::int64_t> live() const;
  /// Handles issued so far: the next create or fork gets this number.
  std::int64_t handles() const { return handles_; }
  std::size_t size(std::int64_t h) const { return seqs_.at(h).tokens.size(); }
  const std::vector<std::int64_t>& tokens(std::int64_t h) const { return seqs_.at(h).tokens; }
  /// Every token sequence a live or released sequence has held, oldest first (prefixes to look up again).
  const std::vector<std::vector<std::int64_t>>& history() const { return history_; }
  /// Blocks an append could take: free ones plus evictable ones.
  std::size_t available_blocks() const { return config_.capacity - refs_.size(); }
  /// The most rows an append to live sequence h takes.
  std::size_t room(std::int64_t h) const;
  /// Released blocks still cached, which an append may evict.
  std::size_t evictable_blocks() const { return evictable_.size(); }
  /// Whether live sequence h's next append copies its shared, partly filled last block first.
  bool copies_on_append(std::int64_t h) const { return copies_on_append(seqs_.at(h)); }

 private:
  using row = std::vector<double>;
  struct sequence {
    stored_stream rows;
    std::vector<std::int64_t> tokens, blocks;
  };
  struct cached_block {
    std::vector<std::int64_t> prefix;  // the tokens up to the block's end
    std::vector<row> keys, values;     // its rows as given (the stream stores them again when found)
  };
  sequence empty_sequence() const {
    return {stored_stream(profile_.keys, profile_.values, config_, config_.d_k, config_.d_v), {}, {}};
  }
  bool is_live(std::int64_t h) const { return seqs_.count(h) != 0; }
  bool copies_on_append(const sequence& s) const;
  expectation create(const op& o);
  expectation append(const op& o);
  void release(std::int64_t h);
  void hold(std::int64_t block);
  std::int64_t take_block();
  void register_if_full(const sequence& s);

  cache_config config_;
  numeric_profile profile_;
  std::map<std::int64_t, sequence> seqs_;
  std::map<std::int64_t, std::int64_t> refs_;                     // held block -> tables holding it
  std::map<std::vector<std::int64_t>, std::int64_t> registered_;  // token prefix -> block
  std::map<std::int64_t, cached_block> cached_;                   // registered block -> its prefix and rows
  std::list<std::int64_t> evictable_;                             // least recently released first
  std::vector<std::vector<std::int64_t>> history_;
  std::int64_t handles_ = 0, blocks_made_ = 0, hit_rows_ = 0;
};

}  // namespace kvconform
