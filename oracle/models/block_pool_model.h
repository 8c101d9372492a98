// What the models of the block-pool kinds (paged, prefix) share: sequences by handle over one pool of abstract blocks.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Sequences by trace handle (the count of create and fork ops before them, refused forks
/// included), each with its exact rows and a table of abstract block ids; a block's count is the
/// number of tables holding it. Block ids are fresh numbers never reused: snapshots compare them up
/// to renaming. A fork shares every block; an append into a shared, partly filled last block
/// copies it first; a release drops the sequence's references, its last block first.
///
/// Refusals every pool shares (a set of acceptable reasons where several apply):
/// - append: `index` for a handle that names no live sequence and `shape` for malformed k/v (or
///   what else the kind's appends must carry), either one when both hold; `capacity` only for a
///   live sequence and a well-formed append, when the blocks an append could take are too few
///   (and the kind cannot make room).
/// - decode: any of `index`, `shape` (q not 1-D of width d_k), `empty` (a live sequence with no
///   rows) that holds.
/// - fork, release: `index` for a handle that names no live sequence. create is never refused.
/// - prefill: an append of the same steps (and `shape` for q not (m, d_k)); its m queries attend causally over
///   the sequence's rows (docs/design.md §2.3).
/// - rollback: `index` for a dead handle, a negative count or more steps than the sequence holds. The blocks past
///   its new end leave its table (last first, as a release); a block it keeps partly filled stays as it is for
///   every other holder, and the next append copies it first when another table holds it or the kind froze it.
///   With the policy rollback_blocks=kept (vLLM's rejected drafts) the blocks past the end stay in its table until
///   its release: later appends write into them, each replaced by a fresh block first when another table holds it
///   or the kind froze it, and a fork shares only the blocks that hold rows (docs/kinds/paged.md).
/// A kind adds what its pool does beyond that through the protected hooks.
class block_pool_model : public model {
 public:
  expectation apply(const op& o) final;
  /// One stream "seq H" per live handle in handle order (rows and block table), the kind's
  /// counters (count), and every held block's count.
  snapshot observe() const final;

  const cache_config& config() const { return config_; }
  /// Live handles, oldest first.
  std::vector<std::int64_t> live() const;
  bool is_live(std::int64_t h) const { return seqs_.count(h) != 0; }
  /// Handles issued so far: the next create or fork gets this number.
  std::int64_t handles() const { return handles_; }
  /// Rows of live sequence h.
  std::size_t size(std::int64_t h) const { return seqs_.at(h).rows.size(); }
  /// Blocks an append could take: those no table holds.
  std::size_t available_blocks() const { return config_.capacity - refs_.size(); }
  /// The most rows an append to live sequence h takes (without making room): the room in its table plus every
  /// available block's, less a block for each table entry it would copy before writing into it.
  std::size_t room(std::int64_t h) const;
  /// Whether live sequence h's last block holding rows is partly filled and held by another table too (or frozen by
  /// the kind), so that its next append copies it first.
  bool copies_on_append(std::int64_t h) const;
  /// Whether live sequence h's last block holding rows is partly filled and held by another table too.
  bool shares_last_block(std::int64_t h) const;
  /// Blocks of live sequence h's table past its rows (rollback_blocks=kept).
  std::size_t kept_blocks(std::int64_t h) const;
  /// Blocks taken since the pool began (each a fresh id): more than the pool has means some were taken again.
  std::size_t blocks_taken() const { return static_cast<std::size_t>(blocks_made_); }
  /// The steps of the last op when it was an accepted prefill (the drafts a rollback may reject), else 0.
  std::size_t drafts() const { return drafts_; }

 protected:
  /// A sequence: its rows, its block table and (when the kind's appends carry them) a token per row and the extra
  /// key of its create (prefix).
  struct sequence {
    stored_stream rows;
    std::vector<std::int64_t> blocks, tokens;
    std::int64_t extra_key = 0;
  };
  block_pool_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {})
      : config_(c), profile_(p), keep_rolled_back_(policies.is("rollback_blocks", "kept")) {}

  /// A create: an empty sequence unless the kind finds rows for it.
  virtual void create(const op& o) {
    (void)o;
    add(empty_sequence());
  }
  /// Whether an append of `steps` steps carries what else the kind's appends need (shape otherwise).
  virtual bool well_formed(const op& o, std::size_t steps) const {
    (void)o, (void)steps;
    return true;
  }
  /// Makes room for `steps` rows in live sequence o.seq when there is too little, recording what
  /// it did in `e`; false (nothing changed) when it cannot: the append is refused for capacity.
  virtual bool make_room(const op& o, std::size_t steps, expectation& e) {
    (void)o, (void)steps, (void)e;
    return false;
  }
  /// A block for new rows, held once.
  virtual std::int64_t take_block();
  /// Before an accepted append takes `n` blocks (take_block n times): a kind that evicts in units may do so here.
  virtual void taking(std::size_t n) { (void)n; }
  /// After an accepted append wrote rows [from, size) of `s` (their blocks already in its table).
  virtual void appended(sequence& s, const op& o, std::size_t from) { (void)s, (void)o, (void)from; }
  /// Block b is held by no table any more (a release, a rollback, a copy).
  virtual void unheld(std::int64_t b) { (void)b; }
  /// Before a release drops the references of live sequence `s`.
  virtual void releasing(const sequence& s) { (void)s; }
  /// Before and after every op.
  virtual void starting(const op& o) { (void)o; }
  virtual void finished(const op& o) { (void)o; }
  /// Whether block b must not be written even by its only holder (a registered prefix block).
  virtual bool frozen(std::int64_t b) const {
    (void)b;
    return false;
  }
  /// After an accepted rollback cut `s`'s rows, tokens and block table.
  virtual void rolled_back(sequence& s) { (void)s; }
  /// The kind's counters, in order (and streams of its own, after the sequences').
  virtual void count(snapshot& out) const = 0;
  /// An op the kind decides itself before the pool does (an op of its own, or one it refuses for a reason of its
  /// own); nullopt leaves it to the pool.
  virtual std::optional<expectation> own_op(const op& o) {
    (void)o;
    return std::nullopt;
  }
  /// The steps of an append when k and v are well-formed (append_steps over d_k and d_v).
  virtual std::optional<std::size_t> steps_of(const op& o) const { return append_steps(o, config_.d_k, config_.d_v); }
  /// Step i's value row, as given: v's.
  virtual std::vector<double> value_row(const op& o, std::size_t i) const {
    return stored_row(o.v, i, profile_.storage);
  }
  /// A decode of one query row over the sequence's rows (add_decode).
  virtual expectation decode(const op& o) const;
  /// Whether a prefill of `steps` well-formed steps carries well-formed queries: q (steps, d_k).
  virtual bool prefill_queries(const op& o, std::size_t steps) const;
  /// The problems of an accepted prefill onto live o.seq, which held `before` rows: query i attends causally over
  /// them and the prefill's first i + 1 (add_prefill).
  virtual void prefill_problems(const op& o, std::size_t before, expectation& e) const;

  sequence empty_sequence() const {
    return {stored_stream(profile_.keys, profile_.values, config_, config_.d_k, config_.d_v), {}, {}};
  }
  /// Gives `s` the next handle.
  void add(sequence s) { seqs_.emplace(handles_++, std::move(s)); }
  /// Uses up the next handle without a sequence (a fork the kind refuses itself).
  void skip_handle() { ++handles_; }
  const sequence& at(std::int64_t h) const { return seqs_.at(h); }
  sequence& at(std::int64_t h) { return seqs_.at(h); }
  const std::map<std::int64_t, sequence>& sequences() const { return seqs_; }
  /// Releases live sequence h.
  void release(std::int64_t h);
  /// Whether append `o` (or a prefill) is malformed: k, v or what else the kind's appends carry; a prefill's q too.
  bool malformed(const op& o) const;
  /// One table more holds block b; true when none did before.
  bool hold(std::int64_t b) { return refs_[b]++ == 0; }
  /// One table fewer holds block b (unheld() when none does any more).
  void drop_ref(std::int64_t b);
  std::size_t held_blocks() const { return refs_.size(); }
  bool held(std::int64_t b) const { return refs_.count(b) != 0; }

  cache_config config_;
  numeric_profile profile_;
  std::string note_;  ///< a hook's note on the op (expectation::note), taken by apply

 private:
  expectation apply_op(const op& o);
  expectation append(const op& o);
  expectation prefill(const op& o);
  expectation rollback(const op& o);
  expectation fork(const op& o);
  /// The table entries of live h that an append of `steps` steps writes into and must replace by a fresh block
  /// first (a shared or frozen one), and the blocks it adds past its table.
  std::pair<std::vector<std::size_t>, std::size_t> append_blocks(std::int64_t h, std::size_t steps) const;
  /// Whether table entry `j` of `s` must be replaced before an append writes into it.
  bool replaces(const sequence& s, std::size_t j) const;

  std::map<std::int64_t, sequence> seqs_;      // live sequences by handle
  std::map<std::int64_t, std::int64_t> refs_;  // held block -> tables holding it (> 0)
  std::int64_t handles_ = 0, blocks_made_ = 0;
  std::size_t drafts_ = 0;
  bool keep_rolled_back_;  // rollback_blocks=kept
};

}  // namespace kvconform
