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
///
/// A scheduler's phases (capability `phases`, docs/kinds/prefix.md "Phases"; prefix_phases.cpp): sequences are
/// *waiting* (a prompt, no block) or *running* (a table).
/// - lookup(tokens): a new waiting sequence; its hit is found as a create's, its runs used and the run it ends inside
///   split (eviction=leaf), but nothing is held and no block taken.
/// - admit(seq, count): waiting seq matches its prompt again (the lookup's hit is not kept: blocks may have been
///   evicted meanwhile), holds that hit and takes the blocks of its next `count` rows into its table past its rows,
///   evicting as an append does. `index` for a sequence not waiting or a negative count; `capacity`, changing
///   nothing, when free and evictable blocks other than the hit's are fewer than it takes.
/// - retract(seq): running seq lets go of its table (last first, no insert) and waits again; its prompt becomes its
///   tokens followed by what of its old prompt lies past them. `index` otherwise.
/// - abort(seq): seq ends, its table let go of without the insert of a release. `index` for a dead handle.
/// A waiting sequence refuses append, prefill, decode, fork, rollback and retract with `index`.
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
  /// Registered blocks some table holds (locked, as a radix tree's nodes on a request's path).
  std::size_t protected_blocks() const;
  /// Whether live handle h waits (made by a lookup, or retracted, and not admitted since).
  bool waiting(std::int64_t h) const { return waiting_.count(h) != 0; }
  /// Live handle h's prompt: its create's or lookup's tokens (a fork's: its parent's), or after a retract its tokens
  /// and the rest of its old prompt.
  const std::vector<std::int64_t>& prompt(std::int64_t h) const { return prompts_.at(h); }
  /// What the last op did that tells the policies apart, for the coverage probe.
  struct facts {
    bool hit_stopped_before_last = false;  ///< hit_limit kept a create's hit shorter than its registered prefix
    bool duplicate = false;                ///< a block filled under a chain registered already
    bool found_second = false;             ///< a create found a duplicate whose first copy was evicted
    bool evicted_run = false;              ///< eviction=leaf evicted a leaf of two or more blocks at once
    bool evicted_before_free = false;      ///< free_order=one_queue evicted while never-registered blocks waited
    bool foreign_key_hit = false;          ///< a create's tokens were cached under another extra key only
    // The phases:
    bool hit_lost = false;             ///< an admit's hit was shorter than its lookup's: blocks evicted in between
    int divergence = -1;               ///< a lookup's prompt left a registered chain at this offset of a block
    bool retract_mid_prefill = false;  ///< a retract of a sequence holding rows and blocks still to be written
    bool evicted = false;              ///< an allocation evicted registered blocks
    bool evicted_under_lock = false;   ///< eviction=leaf evicted a leaf while a held run was less recently used
    bool aborted_waiting = false;      ///< an abort ended a sequence never admitted since its lookup
    std::size_t admitted_hit = 0;      ///< the rows an accepted admit's hit holds
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
  /// The phases (prefix_phases.cpp), and the refusals of a waiting sequence.
  std::optional<expectation> own_op(const op& o) override;

  /// The blocks a create of `tokens` under `key` finds: the earliest registered block of each chain of the longest
  /// registered prefix, cut as hit_limit says (the facts of the hit set).
  std::vector<std::int64_t> find_hit(const std::vector<std::int64_t>& tokens, std::int64_t key);
  /// Empty sequence `s` holds `hits`, found for `tokens`: their rows from the cache, their runs used, the last split
  /// after it (eviction=leaf); hit_rows grows.
  void hold_hit(sequence& s, const std::vector<std::int64_t>& hits, const std::vector<std::int64_t>& tokens);
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
  // The phases (prefix_phases.cpp)
  expectation lookup(const op& o);
  expectation admit(const op& o);
  expectation retract(const op& o);
  expectation abort(const op& o);
  /// The offset within the block after `hit_blocks` whole blocks at which `tokens` (under `key`) leaves the longest
  /// registered chain that continues them, or -1 when none does (or tokens end inside that block on it).
  int divergence(const std::vector<std::int64_t>& tokens, std::size_t hit_blocks, std::int64_t key) const;
  /// eviction=leaf: whether some held run is less recently used than every leaf eviction could take.
  bool lock_before_lru() const;

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
  std::map<std::int64_t, std::vector<std::int64_t>> prompts_;  // live handle -> its prompt
  std::set<std::int64_t> waiting_;
  std::map<std::int64_t, std::size_t> looked_up_;  // waiting handle -> rows its lookup found
  bool aborting_ = false;                          // a release without the insert
};

}  // namespace kvconform
