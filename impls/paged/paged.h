// The reference paged KV cache: a pool of fixed-size blocks shared by sequences through block tables.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/formats.h"
#include "impls/common/row_storage.h"
#include "impls/common/sequences.h"

namespace kvconform {

#ifdef KVCONFORM_NO_POISON
inline constexpr bool poison_free_slots = false;
#else
/// Free and never-written slots hold NaN, so a read of a slot that belongs to no sequence makes
/// a decode non-finite instead of quietly weighing stale rows. KVCONFORM_NO_POISON skips the fills.
inline constexpr bool poison_free_slots = true;
#endif

/// The allocation rules of a paged cache. Mutants replace one of them (impls/paged/mutants/*.h).
struct paged_rules {
  /// The formats keys and values are stored in (docs/numerics.md §6): element formats and per-token
  /// groups quantized on arrival (a pool block holds final rows only).
  using storage = storage_policy<>;
  /// Whether a block held by `refs` tables is copied before a write into it (copy-on-write).
  static bool copy_on_write(std::size_t refs) { return refs > 1; }
  /// References a fork adds to a block that has `filled` slots in use: one per block, however full.
  static std::size_t fork_references(std::size_t /*filled*/) { return 1; }
  /// Takes `need` blocks off the free list, or throws capacity_error having taken none.
  static std::vector<std::size_t> take(std::vector<std::size_t>& free, std::size_t need) {
    if (need > free.size()) throw capacity_error("append: block pool exhausted");
    // In pop order, so that a fresh pool hands out ascending blocks and a long append lies in order.
    std::vector<std::size_t> taken(free.rbegin(), free.rbegin() + static_cast<std::ptrdiff_t>(need));
    free.resize(free.size() - need);
    return taken;
  }
  /// The pool row where block `block` begins.
  static std::size_t block_start(std::size_t block, std::size_t block_size) { return block * block_size; }
  /// Whether a rollback frees the slots past the new end of the block it keeps partly filled (poisons them), given
  /// the tables holding it: only when this table alone does, as another one still reads them.
  static bool clears_tail(std::size_t refs) { return poison_free_slots && refs == 1; }
  /// Whether a row's values are part of its key row (a latent cache, docs/kinds/latent.md) rather than stored apart,
  /// and where among the key values they begin.
  static constexpr bool shared_values = false;
  static std::size_t value_offset(std::size_t /*d_k*/, std::size_t /*d_v*/) { return 0; }
  /// The policy rollback_blocks=kept (docs/kinds/paged.md): a rollback keeps the blocks past the new end in the
  /// table until the release, and later appends write into them (vLLM's rejected drafts).
  static constexpr bool keep_rolled_back = false;
};

/// What a paged prefill gives: the causal attentions of its queries, and the sequences it preempted to fit.
template <class Id>
struct paged_prefill_result : decode_result {
  std::vector<Id> preempted;
};

/// A pool of num_blocks blocks of block_size rows, shared by sequences: each sequence has a
/// block table, and a block's reference count is the number of tables holding it. fork shares
/// every block without allocating; a write into a shared, partly filled last block copies that
/// block first. Refusals throw and change nothing anywhere: no block taken, no count moved.
template <class Rules = paged_rules>
class basic_paged {
  using storage = typename Rules::storage;
  using side = side_storage<typename storage::rules>;
  static constexpr bool formats = storage::keys.rounds() || storage::values.rounds();
  static constexpr bool groups = storage::keys.groups || storage::values.groups;
  static constexpr bool shared = Rules::shared_values;
  static_assert(storage::keys.chunk() == 1 && storage::values.chunk() == 1,
                "a paged cache stores final rows in its blocks: no residual, no per-channel groups");

 public:
  using seq_id = std::size_t;
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using view = Eigen::Map<const row_matrix>;

  /// With `preempt`, an append that does not fit releases other sequences first (see append).
  basic_paged(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v, bool preempt = false)
      : block_size_(block_size),
        preempt_(preempt),
        k_(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(d_k)),
        v_(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(shared ? 0 : d_v)),
        d_v_(d_v),
        refs_(num_blocks, 0),
        ks_(storage::keys, formats ? num_blocks * block_size : 0, d_k, 1),
        vs_(storage::values, formats && !shared ? num_blocks * block_size : 0, d_v, 1) {
    if (block_size == 0 || d_k == 0 || d_v == 0) throw shape_error("paged: block_size, d_k and d_v must be positive");
    if (shared && d_v > d_k) throw shape_error("paged: values read from key rows cannot be wider than them");
    // Value rows read from key rows in integer groups are their first groups: whole ones.
    if (shared && groups && d_v % storage::keys.group != 0)
      throw shape_error("paged: integer groups must divide the value rows read from the key rows");
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);  // the free list pops block 0 first
    if constexpr (poison_free_slots) k_.setConstant(nan()), v_.setConstant(nan());
  }

  /// A new, empty sequence; it holds no block until its first append. Ids are never reused.
  seq_id create() {
    seqs_.emplace(next_id_, sequence{});
    return next_id_++;
  }

  /// A new sequence with s's rows, sharing every block of s that holds rows (reference counts, no allocation).
  seq_id fork(seq_id s) {
    sequence from = find(s);
    from.blocks.resize((from.len + block_size_ - 1) / block_size_);  // not those a rollback kept past the end
    for (std::size_t j = 0; j < from.blocks.size(); ++j)
      refs_[from.blocks[j]] += Rules::fork_references(filled(from, j));
    seqs_.emplace(next_id_, from);
    return next_id_++;
  }

  /// Releases s: blocks no other table holds go back to the pool. index_error if s is unknown.
  void release(seq_id s) { drop(find_sequence(seqs_, s, "paged")); }

  /// Appends one step (1-D) or n steps (2-D) to s; n = 0 is a no-op. Throws index_error for an
  /// unknown or released s, shape_error for a wrong rank, width or step mismatch, and
  /// capacity_error when the pool lacks the blocks (one more when the shared last block must be
  /// copied). With preemption the most recently created other sequences are released, newest
  /// first, until the append fits, and their ids returned; if it cannot fit even with every other
  /// sequence gone, it is refused with nothing released.
  std::vector<seq_id> append(seq_id s, array_view k, array_view v) requires(!shared) { return write(s, k, v); }
  /// The append of a cache whose values are part of its key rows: k alone.
  std::vector<seq_id> append(seq_id s, array_view k) requires shared { return write(s, k, k); }

  /// Appends the m steps of k and v to s as append does (preempting alike), then attends with query row i of q
  /// (2-D (m, d_k)) over the rows before it and the chunk's first i + 1: output (m, d_v), weights (m, size before
  /// + m). Refused as append is, or for q's shape, before anything changes.
  paged_prefill_result<seq_id> prefill(seq_id s, array_view k, array_view v, array_view q) {
    return prefill_with(s, k, v, q, [] { return score_terms{}; });
  }

  /// Drops the newest n steps of s: blocks past its new end leave its table (free when no other holds them); the
  /// block it keeps partly filled stays whole for its other holders, and the next append copies it first.
  /// index_error (and no change) for an unknown s or more steps than it holds.
  void rollback(seq_id s, std::size_t n) {
    sequence& q = find(s);
    if (n > q.len) throw index_error("rollback: fewer steps held");
    q.len -= n;
    if constexpr (formats) ks_.truncate(q.keys, q.len);
    if constexpr (formats && !shared) vs_.truncate(q.values, q.len);
    while (!Rules::keep_rolled_back && q.blocks.size() * block_size_ >= q.len + block_size_)
      unref(q.blocks.back()), q.blocks.pop_back();
    if (const Eigen::Index kept = filled_rows(q); kept > 0 && Rules::clears_tail(refs_[last_block(q)])) {
      const auto tail = static_cast<Eigen::Index>(block_size_) - kept;
      k_.middleRows(first_row(last_block(q)) + kept, tail).setConstant(nan());
      v_.middleRows(first_row(last_block(q)) + kept, tail).setConstant(nan());
    }
  }

  /// One decode step over s's rows, read in place through its block table (no gather).
  /// Throws index_error for an unknown s, shape_error unless q is 1-D of width d_k, and
  /// empty_error for a sequence with no rows.
  decode_result decode_step(seq_id s, array_view q) const {
    return decode_with(s, q, [] { return score_terms{}; });
  }

  std::size_t size(seq_id s) const { return find(s).len; }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return d_v_; }
  std::size_t block_size() const { return block_size_; }
  std::size_t num_blocks() const { return refs_.size(); }

  /// Contiguous copies of s's rows in order, (size, d_k) and (size, d_v): its blocks are
  /// scattered over the pool. Decode does not copy.
  row_matrix keys(seq_id s) const { return gather(k_, find(s)); }
  row_matrix values(seq_id s) const {
    if constexpr (shared) return gather(k_, find(s)).middleCols(value_offset(), static_cast<Eigen::Index>(d_v_));
    return gather(v_, find(s));
  }

  /// Introspection for the block-accounting properties: the pool's free blocks, s's block
  /// table (block numbers in [0, num_blocks)), a block's reference count, the bytes of the
  /// blocks handed out (nothing is reserved per sequence), and a block's raw slots (poisoned
  /// when unused).
  std::size_t free_blocks() const { return free_.size(); }
  const std::vector<std::size_t>& block_table(seq_id s) const { return find(s).blocks; }
  std::size_t ref_count(std::size_t block) const { return refs_.at(block); }
  std::size_t block_bytes() const {
    if constexpr (formats) return ks_.bytes(block_size_) + (shared ? 0 : vs_.bytes(block_size_));
    return block_size_ * (d_k() + (shared ? 0 : d_v())) * sizeof(double);
  }
  /// The per-tensor scales of a scaled element format (docs/numerics.md §6.1).
  void set_scales(double k_scale, double v_scale) requires(storage::keys.scaled || storage::values.scaled) {
    ks_.set_scale(k_scale), vs_.set_scale(v_scale);
  }
  /// Integer groups: the scales and minima of s's rows, in order (docs/numerics.md §6.2).
  Eigen::MatrixXd key_scales(seq_id s) const requires groups { return exposed(ks_, find(s).keys, find(s), false); }
  Eigen::MatrixXd key_zeros(seq_id s) const requires groups { return exposed(ks_, find(s).keys, find(s), true); }
  Eigen::MatrixXd value_scales(seq_id s) const requires groups { return value_groups(s, false); }
  Eigen::MatrixXd value_zeros(seq_id s) const requires groups { return value_groups(s, true); }
  std::size_t bytes_in_use() const { return (num_blocks() - free_blocks()) * block_bytes(); }
  view block_keys(std::size_t block) const {
    return {k_.data() + first_row(block) * k_.cols(), static_cast<Eigen::Index>(block_size_), k_.cols()};
  }

 protected:
  /// decode_step with the score terms `terms()` gives (docs/numerics.md §7), taken after s and q are checked.
  template <class Terms>
  decode_result decode_with(seq_id s, array_view q, Terms terms) const {
    const sequence& sq = find(s);
    if (q.rank != 1 || q.dims[0] != d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
    const score_terms t = terms();
    if (sq.len == 0) throw empty_error("decode_step: empty sequence");
    const rows_in_order rows(*this, sq);
    return attend(
        sq.len, d_k(), d_v(), q.data, [&](std::size_t i) { return rows.keys[i]; },
        [&](std::size_t i) { return rows.values[i]; }, [](std::size_t) { return true; }, t);
  }
  /// prefill with the score terms `terms()` gives, taken before anything changes.
  template <class Terms>
  paged_prefill_result<seq_id> prefill_with(seq_id s, array_view k, array_view v, array_view q, Terms terms) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = find(s).len;
    check_prefill_queries(q, steps, d_k());
    const score_terms t = terms();
    paged_prefill_result<seq_id> r;
    r.preempted = append(s, k, v);
    const rows_in_order rows(*this, find(s));
    static_cast<decode_result&>(r) = attend_causal(
        steps, rows.keys.size(), d_k(), d_v(), q.data, [&](std::size_t i) { return rows.keys[i]; },
        [&](std::size_t i) { return rows.values[i]; },
        [&](std::size_t query, std::size_t row) { return row <= before + query; }, t);
    return r;
  }
  /// append's body; v is k itself when the values are part of the key rows.
  std::vector<seq_id> write(seq_id s, array_view k, array_view v) {
    sequence& q = find(s);
    const std::size_t steps = checked_append_steps(k, v, d_k(), shared ? d_k() : d_v());
    if (steps == 0) return {};
    const std::vector<seq_id> victims = preempt_ ? victims_for(s, steps) : std::vector<seq_id>{};
    for (seq_id x : victims) drop(seqs_.find(x));
    const std::vector<std::size_t> fresh = Rules::take(free_, blocks_needed(q, steps, refs_));
    auto next = fresh.begin();
    for (std::size_t j : copied_entries(q, steps, refs_)) {  // the rows it holds in each, none past its end
      std::size_t& to = q.blocks[j];
      const std::size_t from = to;
      const auto rows = j == q.len / block_size_ ? filled_rows(q) : Eigen::Index{0};
      to = *next++;
      k_.middleRows(first_row(to), rows) = k_.middleRows(first_row(from), rows);
      v_.middleRows(first_row(to), rows) = v_.middleRows(first_row(from), rows);
      for (Eigen::Index r = 0; formats && r < rows; ++r) {
        const auto src = static_cast<std::size_t>(first_row(from) + r);
        const auto dst = static_cast<std::size_t>(first_row(to) + r);
        ks_.copy_slot(src, dst);
        if constexpr (!shared) vs_.copy_slot(src, dst);
      }
      --refs_[from], refs_[to] = 1;
    }
    for (std::size_t i = 0; i < steps; ++i, ++q.len) {
      if (q.len == q.blocks.size() * block_size_) q.blocks.push_back(*next), refs_[*next++] = 1;
      if constexpr (formats) {
        store(ks_, q.keys, k_, q, k.data + i * d_k());
        if constexpr (!shared) store(vs_, q.values, v_, q, v.data + i * d_v());
      } else {
        k_.row(slot(q, q.len)) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), k_.cols());
        if constexpr (!shared)
          v_.row(slot(q, q.len)) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), v_.cols());
      }
    }
    return victims;
  }
  /// The addresses of the first `count` slots of s's block table in order: its rows, and past them the unused slots of
  /// its last block (at most table_slots(s)).
  std::vector<const double*> key_rows(seq_id s, std::size_t count) const {
    const sequence& sq = find(s);
    std::vector<const double*> rows;
    for (std::size_t i = 0; i < count; ++i) rows.push_back(k_.data() + slot(sq, i) * k_.cols());
    return rows;
  }
  std::size_t table_slots(seq_id s) const { return find(s).blocks.size() * block_size_; }

 private:
  struct sequence {
    std::vector<std::size_t> blocks;
    std::size_t len = 0;
    stream_state keys, values;  // where the sequence stands in each side's format
  };
  /// Writes row q.len of q (its slot already allocated) in the side's format.
  void store(side& s, stream_state& st, row_matrix& m, const sequence& q, const double* in) {
    const auto at = static_cast<std::size_t>(slot(q, q.len));
    s.append(st, at, in, m.data() + at * static_cast<std::size_t>(m.cols()), true, [&](std::size_t i) {
      const auto r = static_cast<std::size_t>(slot(q, i));
      return typename side::row_at{r, m.data() + r * static_cast<std::size_t>(m.cols())};
    });
  }
  Eigen::MatrixXd exposed(const side& s, const stream_state& st, const sequence& q, bool zeros) const {
    return group_matrix(
        s, st, 0, q.len, [&](std::size_t i) { return static_cast<std::size_t>(slot(q, i)); }, zeros);
  }
  /// Values read from key rows have the key rows' first d_v / G groups.
  Eigen::MatrixXd value_groups(seq_id s, bool zeros) const {
    if constexpr (!shared) return exposed(vs_, find(s).values, find(s), zeros);
    const Eigen::MatrixXd all = exposed(ks_, find(s).keys, find(s), zeros);
    return all.leftCols(std::min<Eigen::Index>(all.cols(), static_cast<Eigen::Index>(d_v_ / storage::keys.group)));
  }
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  Eigen::Index value_offset() const { return static_cast<Eigen::Index>(Rules::value_offset(d_k(), d_v_)); }
  /// The addresses of a sequence's rows in order, block by block: no division per row in the kernel's two passes.
  struct rows_in_order {
    std::vector<const double*> keys, values;
    rows_in_order(const basic_paged& c, const sequence& sq) {
      keys.reserve(sq.len), values.reserve(sq.len);
      for (std::size_t b = 0; keys.size() < sq.len; ++b)
        for (Eigen::Index r = c.first_row(sq.blocks[b]), end = r + static_cast<Eigen::Index>(c.block_size_);
             r < end && keys.size() < sq.len; ++r)
          keys.push_back(c.k_.data() + r * c.k_.cols()),
              values.push_back(shared ? keys.back() + c.value_offset() : c.v_.data() + r * c.v_.cols());
    }
  };

  sequence& find(seq_id s) { return find_sequence(seqs_, s, "paged")->second; }
  const sequence& find(seq_id s) const { return find_sequence(seqs_, s, "paged")->second; }

  Eigen::Index first_row(std::size_t block) const {
    return static_cast<Eigen::Index>(Rules::block_start(block, block_size_));
  }
  Eigen::Index slot(const sequence& s, std::size_t i) const {
    return first_row(s.blocks[i / block_size_]) + static_cast<Eigen::Index>(i % block_size_);
  }
  /// Rows of block j of s in use.
  std::size_t filled(const sequence& s, std::size_t j) const { return std::min(block_size_, s.len - j * block_size_); }
  /// The block holding s's last row (a rollback may keep blocks past it).
  std::size_t last_block(const sequence& s) const { return s.blocks[(s.len - 1) / block_size_]; }
  /// Rows in use in s's last block when it is partly filled, else 0.
  Eigen::Index filled_rows(const sequence& s) const { return static_cast<Eigen::Index>(s.len % block_size_); }
  /// The table entries an append of n > 0 rows to s writes into that another table holds too: its partly filled
  /// last block, and blocks a rollback kept past its end (copied first).
  std::vector<std::size_t> copied_entries(const sequence& s, std::size_t n,
                                          const std::vector<std::size_t>& refs) const {
    std::vector<std::size_t> out;
    for (std::size_t j = s.len / block_size_; j <= (s.len + n - 1) / block_size_ && j < s.blocks.size(); ++j)
      if (Rules::copy_on_write(refs[s.blocks[j]])) out.push_back(j);
    return out;
  }
  /// Blocks an append of n > 0 rows to s takes, counting the copies.
  std::size_t blocks_needed(const sequence& s, std::size_t n, const std::vector<std::size_t>& refs) const {
    const std::size_t room = s.blocks.size() * block_size_ - s.len;
    return copied_entries(s, n, refs).size() + (n > room ? (n - room + block_size_ - 1) / block_size_ : 0);
  }

  /// The sequences to preempt so that n rows fit into s, newest first; none when even all
  /// of them would not make room. Works on a copy of the counts: nothing changes here.
  std::vector<seq_id> victims_for(seq_id s, std::size_t n) const {
    std::vector<std::size_t> refs = refs_;
    std::size_t free = free_.size();
    const sequence& q = find(s);
    std::vector<seq_id> victims;
    for (auto it = seqs_.rbegin(); it != seqs_.rend() && blocks_needed(q, n, refs) > free; ++it) {
      if (it->first == s) continue;
      victims.push_back(it->first);
      for (std::size_t b : it->second.blocks) free += --refs[b] == 0 ? 1 : 0;
    }
    return blocks_needed(q, n, refs) <= free ? victims : std::vector<seq_id>{};
  }

  /// One table fewer holds block b: back to the pool when none does.
  void unref(std::size_t b) {
    if (--refs_[b] > 0) return;
    if constexpr (poison_free_slots) {
      k_.middleRows(first_row(b), static_cast<Eigen::Index>(block_size_)).setConstant(nan());
      v_.middleRows(first_row(b), static_cast<Eigen::Index>(block_size_)).setConstant(nan());
    }
    free_.push_back(b);
  }
  void drop(typename std::map<seq_id, sequence>::iterator it) {
    for (std::size_t b : it->second.blocks) unref(b);
    seqs_.erase(it);
  }

  row_matrix gather(const row_matrix& pool, const sequence& s) const {
    row_matrix out(static_cast<Eigen::Index>(s.len), pool.cols());
    for (std::size_t i = 0; i < s.len; ++i) out.row(static_cast<Eigen::Index>(i)) = pool.row(slot(s, i));
    return out;
  }

  std::size_t block_size_;
  bool preempt_;
  row_matrix k_, v_;  // the pool: block b holds rows [b * block_size, (b + 1) * block_size); v_ empty when shared
  std::size_t d_v_;
  std::vector<std::size_t> refs_;    // per block: the tables holding it
  std::vector<std::size_t> free_;    // blocks no table holds
  std::map<seq_id, sequence> seqs_;  // ordered by id, which is creation order
  seq_id next_id_ = 0;
  side ks_, vs_;  // codes and scales of every pool slot
};

using paged = basic_paged<>;
/// The paged reference storing keys in K and values in V (impls/common/formats.h).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
using paged_stored = stored<basic_paged, paged_rules, K, V, Rules>;

}  // namespace kvconform
