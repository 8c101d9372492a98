// The model of the prefix kind: a block pool (block_pool_model) with tokens, chains of token prefixes, eviction.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <set>
#include <vector>

#include "oracle/models/block_pool_model.h"

namespace kvconform {

/// A block pool whose sequences carry a token per row and the extra key of their create. A full block is
/// registered under its chain: the extra key and the whole token prefix up to the block's end (a plain map: no
/// hashing, so no collision). A registered block no table holds is evictable; an append takes free blocks first,
/// then evicts. The declared policies (docs/kinds/prefix.md "Policies") decide what a create's hit may cover
/// (hit_limit), what happens to a block that fills under a chain already registered (duplicates), what an append
/// evicts (eviction: the least recently released block, or the least recently used leaf of the radix tree) and which
/// unheld block it takes first (free_order).
///
/// Beyond the pool's refusals: an append's (and a prefill's) `shape` also for a token count other than the step
/// count, and its `capacity` when the blocks it could take are too few.
class prefix_model : public block_pool_model {
 public:
  prefix_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {});

  const std::vector<std::int64_t>& tokens(std::int64_t h) const { return at(h).tokens; }
  std::int64_t extra_key(std::int64_t h) const { return at(h).extra_key; }
  /// A token sequence a live or released sequence has held, under its extra key.
  struct held_tokens {
    std::int64_t extra_key;
    std::vector<std::int64_t> tokens;
  };
  /// Every token sequence held so far, oldest first (prefixes to look up again).
  const std::vector<held_tokens>& history() const { return history_; }
  /// Registered blocks no table holds.
  std::size_t evictable_blocks() const { return evictable_count_; }
  /// What the last op did that tells the policies apart, for the coverage probe.
  struct facts {
    bool hit_stopped_before_last = false;  ///< hit_limit kept a create's hit shorter than its registered prefix
    bool duplicate = false;                ///< a block filled under a chain registered already
    bool found_second = false;             ///< a create found a duplicate whose first copy was evicted
    bool evicted_run = false;              ///< eviction=leaf evicted a leaf of two or more blocks at once
    bool evicted_before_free = false;      ///< free_order=one_queue evicted while never-registered blocks waited
    bool foreign_key_hit = false;          ///< a create's tokens were cached under another extra key only
  };
  const facts& last() const { return last_; }

 protected:
  using row = std::vector<double>;
  using chain = std::pair<std::int64_t, std::vector<std::int64_t>>;  // extra key, tokens up to a block's end
  struct cached_block {
    chain key;
    std::vector<row> keys, values;  // its rows as given (the stream stores them again when found)
    std::int64_t node = -1;         // eviction=leaf: its run of the radix tree
    bool duplicate = false;         // registered while another block held its chain (duplicates=registered)
  };
  /// eviction=leaf: a run of the radix tree, the blocks one append registered (split where a hit ended inside it
  /// or another chain branched off), with its parent run and when it was last used.
  struct run {
    std::vector<std::int64_t> blocks;
    std::int64_t parent = -1;
    std::size_t children = 0;
    std::uint64_t stamp = 0;
  };

  void create(const op& o) override;
  bool well_formed(const op& o, std::size_t steps) const override { return o.tokens.size() == steps; }
  std::int64_t take_block() override;
  void taking(std::size_t n) override;
  /// The append's tokens; each full block registered (or adopted, with duplicates=adopted) as its last row arrives.
  void appended(sequence& s, const op& o, std::size_t from) override;
  void unheld(std::int64_t b) override;
  void releasing(const sequence& s) override;
  /// A registered block stays what its chain says: a rollback that leaves it partly filled makes the next append
  /// copy it first (docs/kinds/prefix.md).
  bool frozen(std::int64_t b) const override { return cached_.count(b) != 0; }
  /// free_blocks, evictable_blocks and hit_rows.
  void count(snapshot& out) const override;
  void starting(const op& o) override;
  void finished(const op& o) override;

  /// Block j of `s` is full: registered, adopted, or left alone (duplicates=first).
  void filled(sequence& s, std::size_t j);
  chain chain_of(const sequence& s, std::size_t end) const;
  /// A registered block a table holds again: no longer evictable.
  void revive(std::int64_t b);
  /// Block b leaves the cache: its chain no longer finds it.
  void evict(std::int64_t b);
  // eviction=leaf (prefix_tree.cpp)
  void tree_add(const sequence& s, std::size_t j, std::int64_t b);
  /// Splits run r after its block at index `keep - 1`: the rest becomes its only child.
  void split(std::int64_t r, std::size_t keep);
  /// Splits the run of registered block b after it, when b is not its last.
  void cut_after(std::int64_t b);
  /// After an append and at a release: the runs of s's full blocks used now, the last one's split after it.
  void insert_path(const sequence& s);
  void stamp_runs(const std::vector<std::int64_t>& blocks);
  void evict_leaf();
  /// After an op: a run held in part splits where the holding ends.
  void settle();
  bool evictable_leaf(std::int64_t r) const;

  bool all_but_last_, drop_last_hit_, one_queue_, leaf_;
  enum class duplicate_rule { first, registered, adopted } duplicates_;
  std::map<chain, std::vector<std::int64_t>> registered_;  // chain -> its blocks, earliest first
  std::map<std::int64_t, cached_block> cached_;            // registered block -> its chain and rows
  std::size_t evictable_count_ = 0;
  std::list<std::int64_t> evictable_;  // eviction=block, free_order=uncached_first: least recently released first
  std::size_t never_used_;             // free_order=one_queue: blocks never taken, at the queue's front
  std::deque<std::int64_t> queue_;     // then the released ones in release order; -1 for a never-registered one
  std::map<std::int64_t, run> runs_;   // eviction=leaf
  std::int64_t runs_made_ = 0, growing_ = -1;  // growing_: the run the current op registers into
  std::uint64_t clock_ = 0;
  std::vector<held_tokens> history_;
  std::set<std::int64_t> keys_;  // every extra key a create has named
  std::int64_t hit_rows_ = 0;
  facts last_;
};

}  // namespace kvconform
