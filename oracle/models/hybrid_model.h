// The model of the hybrid kind: layer groups of different attention types over one pool of abstract blocks.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Sequences by trace handle, each with a block table per group (full, sliding, cross; -1 where the sliding
/// window has passed a block) and the rows each layer reads. Block ids are fresh numbers, compared up to
/// renaming. An append plans every group at the sequence's new length: the sliding group drops the blocks that
/// hold neither a sink nor a window row, then the blocks that frees serve the append, which takes what the
/// groups still lack (a copy of a shared, partly filled last block it writes into first) or is refused with
/// `capacity` having changed nothing (docs/kinds/hybrid.md).
class hybrid_model final : public model {
 public:
  enum class type : unsigned char { full, sliding, shared, cross };
  static constexpr std::size_t groups = 3;  // full, sliding, cross
  /// `policies`: sliding_free and refused_append (docs/kinds/hybrid.md "Policies").
  hybrid_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {});

  expectation apply(const op& o) override;
  /// One stream "seq H layer L" per live handle and layer (its rows and its group's blocks), the counters
  /// free_blocks and blocks of each group, and every held block's count.
  snapshot observe() const override;

  const cache_config& config() const { return config_; }
  std::vector<std::int64_t> live() const;
  std::int64_t handles() const { return handles_; }
  std::size_t size(std::int64_t h) const { return seqs_.at(h).len; }
  /// Layers, the cross layer included, and the writing ones (the rows of an append's k).
  std::size_t layers() const { return types_.size(); }
  std::size_t writers() const { return config_.layers - config_.shared; }
  type layer_type(std::size_t l) const { return types_[l]; }
  /// The layer whose rows layer l reads: itself, or a shared layer's producer.
  std::size_t source(std::size_t l) const { return source_[l]; }
  std::size_t available_blocks() const { return config_.capacity - refs_.size(); }
  /// Whether an append (or a prefill) of n > 0 steps to live h fits, and the most steps up to `limit` that do.
  bool fits(std::int64_t h, std::size_t n, bool prefill = false) const;
  std::size_t room(std::int64_t h, std::size_t limit, bool prefill = false) const;

  /// What the last op did, for the coverage probe.
  struct facts {
    bool full_took_sliding = false;  ///< the full group took blocks while every free one was the sliding group's
    bool one_group_short = false;    ///< refused for capacity: one group needed blocks, another holds some
    bool hit_limited = false;        ///< a create's prefix hit shorter than one writing group alone would give
    bool read_then_dropped = false;  ///< a prefill's early queries read sliding rows its last one's window drops
    bool held_passed = false;        ///< sliding_free=next_step: blocks the last append passed stay until the next
    bool refused_freed = false;      ///< refused_append=frees_passed: a refused append gave passed blocks back
    bool hit_short = false;          ///< a hit held W - 1 rows of a sliding layer: its window's first block not held
    std::array<bool, groups> copied{};
  };
  const facts& last() const { return last_; }
  /// Whether live h's group g has copied a shared block on append since h was made.
  bool copied(std::int64_t h, std::size_t g) const { return seqs_.at(h).copied[g]; }
  /// With prefix_caching: the tokens live h holds (a create keeps those of its hit only).
  const std::vector<std::int64_t>& tokens(std::int64_t h) const { return seqs_.at(h).tokens; }

 private:
  struct sequence {
    std::size_t len = 0;
    std::array<std::vector<std::int64_t>, groups> tables;
    std::vector<stored_stream> rows;  // per layer; a shared layer's is empty (it reads its producer's)
    std::array<bool, groups> copied{};
    std::vector<std::int64_t> tokens;  // with prefix_caching
    /// With prefix_caching, per layer and position, the rows as given, empty where never held: what a block that
    /// fills is registered with.
    std::vector<std::vector<std::vector<double>>> given_k, given_v;
  };
  /// A registered block: the group's full block for a token prefix, while some table holds it.
  struct cached {
    std::size_t group;
    std::vector<std::int64_t> prefix;
  };
  /// One group's part of an append: blocks dropped (by index in its table), copied and taken.
  struct plan {
    std::vector<std::size_t> drop, take;
    bool copy = false;
  };
  std::size_t group_of(std::size_t l) const;
  bool needs(std::size_t g, std::size_t j, std::size_t n) const;
  /// The plans of n more steps, each group's window taken at length `at` (an append's new length; a prefill's first
  /// query's, so that the rows its queries read stay held while they attend).
  std::array<plan, 2> planned(const sequence& s, std::size_t n, std::size_t at) const;
  /// Blocks the plans take, and blocks they free (dropped ones no other table holds).
  std::pair<std::size_t, std::size_t> demand(const sequence& s, const std::array<plan, 2>& p) const;
  std::int64_t take(std::size_t g);
  void drop_ref(std::int64_t b);
  void push(sequence& s, std::size_t l, std::vector<double> k, std::vector<double> v);
  expectation create(const op& o);
  /// With prefix_caching (hybrid_prefix.cpp): the full blocks per group whose last row `s` just wrote, registered
  /// under their token prefix unless that prefix is registered already; and a new sequence's hit.
  void register_filled(const sequence& s, std::size_t from);
  void take_hit(sequence& s, const std::vector<std::int64_t>& tokens);
  /// The longest prefix (in blocks) of `tokens` whose group-g blocks at that length are all registered, at most
  /// `most` blocks.
  std::size_t hit_blocks(std::size_t g, const std::vector<std::int64_t>& tokens, std::size_t most) const;
  bool registered_at(std::size_t g, const std::vector<std::int64_t>& tokens, std::size_t m) const;
  /// The length whose window a hit of `len` rows holds: its own, or with sliding_free=next_step the next row's.
  std::size_t hit_window(std::size_t len) const { return next_step_ ? len + 1 : len; }
  void keep_given(sequence& s, std::size_t l, std::size_t p, const std::vector<double>& k,
                  const std::vector<double>& v);
  /// The length whose window an append of n steps plans with: its new length, or its first new row's for a prefill
  /// and with sliding_free=next_step.
  std::size_t window_at(const sequence& s, std::size_t n, bool prefill) const;
  /// An append refused for room: what the plans lacked, and with refused_append=frees_passed the blocks given back.
  expectation refused_for_room(sequence& s, const std::array<plan, 2>& p);
  /// The sliding blocks of `s` the window at length `at` no longer reads, and giving them back.
  std::size_t passed(const sequence& s, std::size_t at) const;
  void drop_passed(sequence& s, std::size_t at);
  /// An append; a prefill's, planned at its first query's window, drops the passed blocks after its queries.
  expectation append(const op& o, bool prefill = false);
  /// A prefill (hybrid_prefill.cpp): the append, and each layer's queries judged over the rows they read.
  expectation prefill(const op& o);
  expectation decode(const op& o) const;
  std::int64_t stream_index(std::int64_t h, std::size_t l) const;

  cache_config config_;
  numeric_profile profile_;
  std::vector<type> types_;
  std::vector<std::size_t> source_;
  std::array<bool, groups> writes_{};  // whether a group has writing layers (and so a table that grows)
  std::map<std::int64_t, sequence> seqs_;
  std::map<std::int64_t, std::int64_t> refs_;                                   // held block -> tables holding it
  std::map<std::int64_t, std::size_t> owner_;                                   // held block -> its group
  std::map<std::vector<std::int64_t>, std::int64_t> registered_[2];             // full, sliding: token prefix -> block
  std::map<std::int64_t, cached> cached_;                                       // registered block -> its entry
  std::map<std::int64_t, std::vector<std::vector<double>>> block_k_, block_v_;  // registered block -> rows by layer
  std::int64_t handles_ = 0, blocks_made_ = 0;
  std::size_t sliding_free_ = 0;    // free blocks the sliding group was the last to hold, at least
  bool next_step_, refused_frees_;  // sliding_free=next_step, refused_append=frees_passed
  facts last_;
};

}  // namespace kvconform
