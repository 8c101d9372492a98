// The reference prefix cache: a paged block pool whose full blocks are found again by the hash chain of their tokens.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/sequences.h"

namespace kvconform {

/// The rules of a prefix cache that bugs get wrong. Mutants replace one (impls/prefix/mutants/).
struct prefix_rules {
  /// The hash of a full block: its parent's hash chained with its own tokens, so equal blocks
  /// after different prefixes differ.
  static std::uint64_t block_hash(std::uint64_t parent, std::span<const std::int64_t> tokens) {
    std::uint64_t h = parent ^ 0x9e3779b97f4a7c15ull;
    for (const std::int64_t t : tokens)
      for (int byte = 0; byte < 8; ++byte)
        h = (h ^ ((static_cast<std::uint64_t>(t) >> (8 * byte)) & 0xff)) * 1099511628211ull;
    return h;
  }
  /// Whether a block with `filled` of `block_size` rows may be registered in the cache: full ones only.
  static bool cacheable(std::size_t filled, std::size_t block_size) { return filled == block_size; }
  /// Whether a released block that `refs` tables still hold becomes evictable: only when none do.
  static bool evictable(std::size_t refs) { return refs == 0; }
  /// Whether a block released again after a reuse counts as released now (else: when first released).
  static constexpr bool refresh_on_reuse = true;
  /// Whether eviction forgets the evicted block's hash.
  static constexpr bool forget_on_evict = true;
  /// Whether a registered block a rollback left partly filled is copied before the next write, even by its only
  /// holder: it stays what its hash says for every later hit.
  static constexpr bool copy_registered = true;
};

/// A pool of num_blocks blocks of block_size rows shared by sequences, as in the paged cache (fork
/// shares every block, a write into a shared, partly filled last block copies it first, a refused
/// append changes nothing), with automatic prefix caching: each appended step carries its token;
/// a full block is registered under the hash chain of every token up to its end; create(tokens)
/// starts a sequence with the cached blocks of the longest cached prefix of `tokens`; a released
/// block that is registered stays cached and evictable; when the free blocks run out, the least
/// recently released evictable block is evicted. A block is never evicted while referenced.
template <class Rules = prefix_rules>
class basic_prefix {
 public:
  using seq_id = std::size_t;
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  basic_prefix(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : block_size_(block_size),
        k_(row_matrix::Constant(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(d_k),
                                nan())),
        v_(row_matrix::Constant(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(d_v),
                                nan())),
        blocks_(num_blocks) {
    if (block_size == 0 || d_k == 0 || d_v == 0) throw shape_error("prefix: block_size, d_k and d_v must be positive");
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  /// A new sequence holding the cached full blocks of the longest cached prefix of `tokens`
  /// (none: an empty sequence). Never refused: a hit takes no block.
  seq_id create(std::span<const std::int64_t> tokens) {
    sequence s;
    for (std::size_t at = 0; at < tokens.size();) {
      const std::size_t n = std::min(block_size_, tokens.size() - at);
      if (!Rules::cacheable(n, block_size_)) break;
      const std::uint64_t h = Rules::block_hash(s.hashes.empty() ? 0 : s.hashes.back(), tokens.subspan(at, n));
      const auto hit = cached_.find(h);
      if (hit == cached_.end()) break;
      use(hit->second);
      s.blocks.push_back(hit->second), s.hashes.push_back(h);
      s.tokens.insert(s.tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(at),
                      tokens.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
    }
    hit_rows_ += s.tokens.size();
    seqs_.emplace(next_id_, std::move(s));
    return next_id_++;
  }

  /// A new sequence sharing every block of s.
  seq_id fork(seq_id s) {
    const sequence from = find(s);
    for (std::size_t b : from.blocks) ++blocks_[b].refs;
    seqs_.emplace(next_id_, from);
    return next_id_++;
  }

  /// Releases s, its blocks from the last to the first: a registered block no table holds becomes
  /// evictable (most recently released last), any other unheld block free.
  void release(seq_id s) {
    const auto it = find_sequence(seqs_, s, "prefix");
    for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) unuse(*b);
    seqs_.erase(it);
  }

  /// Appends n steps to s: k and v 1-D (one step) or 2-D (n steps), and one token per step.
  /// Throws index_error for an unknown s, shape_error for a wrong rank, width, step or token count,
  /// and capacity_error when free and evictable blocks together do not suffice (nothing changes).
  void append(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens) {
    sequence& q = find(s);
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (tokens.size() != steps) throw shape_error("append: k, v and tokens differ in steps");
    if (steps == 0) return;
    std::vector<std::size_t> fresh = take(blocks_needed(q, steps));
    if (must_copy(q)) copy_last(q, fresh.back()), fresh.pop_back();
    for (std::size_t i = 0; i < steps; ++i) {
      if (q.tokens.size() % block_size_ == 0)
        q.blocks.push_back(fresh.back()), blocks_[fresh.back()].refs = 1, fresh.pop_back();
      const Eigen::Index row = slot(q, q.tokens.size());
      k_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), k_.cols());
      v_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), v_.cols());
      q.tokens.push_back(tokens[i]);
      register_if_full(q);
    }
  }

  /// Appends the m steps of k, v and tokens to s as append does, then attends with query row i of q (2-D (m, d_k))
  /// over the rows before it and the chunk's first i + 1: output (m, d_v), weights (m, size before + m). Refused as
  /// append is, or for q's shape, before anything changes.
  decode_result prefill(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens, array_view q) {
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v()), before = find(s).tokens.size();
    check_prefill_queries(q, steps, d_k());
    append(s, k, v, tokens);
    const sequence& sq = find(s);
    return attend_causal(
        steps, sq.tokens.size(), d_k(), d_v(), q.data,
        [&](std::size_t i) { return k_.data() + slot(sq, i) * k_.cols(); },
        [&](std::size_t i) { return v_.data() + slot(sq, i) * v_.cols(); },
        [&](std::size_t query, std::size_t row) { return row <= before + query; });
  }

  /// Drops the newest n steps of s: blocks past its new end are released as release does (last first). The block
  /// it keeps partly filled stays as it is, registered when it was, so that the next append copies it first.
  /// index_error (and no change) for an unknown s or more steps than it holds.
  void rollback(seq_id s, std::size_t n) {
    sequence& q = find(s);
    if (n > q.tokens.size()) throw index_error("rollback: fewer steps held");
    q.tokens.resize(q.tokens.size() - n);
    q.hashes.resize(q.tokens.size() / block_size_);
    while (q.blocks.size() * block_size_ >= q.tokens.size() + block_size_) unuse(q.blocks.back()), q.blocks.pop_back();
  }

  /// One decode step over s's rows, read in place through its block table.
  decode_result decode_step(seq_id s, array_view q) const {
    const sequence& sq = find(s);
    if (q.rank != 1 || q.dims[0] != d_k()) throw shape_error("decode_step: q must be 1-D of width d_k");
    if (sq.tokens.empty()) throw empty_error("decode_step: empty sequence");
    return attend(
        sq.tokens.size(), d_k(), d_v(), q.data, [&](std::size_t i) { return k_.data() + slot(sq, i) * k_.cols(); },
        [&](std::size_t i) { return v_.data() + slot(sq, i) * v_.cols(); });
  }

  std::size_t size(seq_id s) const { return find(s).tokens.size(); }
  std::size_t d_k() const { return static_cast<std::size_t>(k_.cols()); }
  std::size_t d_v() const { return static_cast<std::size_t>(v_.cols()); }
  std::size_t num_blocks() const { return blocks_.size(); }
  /// Contiguous copies of s's rows in order (its blocks are scattered over the pool).
  row_matrix keys(seq_id s) const { return gather(k_, find(s)); }
  row_matrix values(seq_id s) const { return gather(v_, find(s)); }
  const std::vector<std::size_t>& block_table(seq_id s) const { return find(s).blocks; }
  std::size_t ref_count(std::size_t block) const { return blocks_.at(block).refs; }
  std::size_t free_blocks() const { return free_.size(); }
  std::size_t evictable_blocks() const { return evictable_.size(); }
  /// Rows every create so far found in the cache.
  std::size_t hit_rows() const { return hit_rows_; }

 private:
  struct sequence {
    std::vector<std::size_t> blocks;
    std::vector<std::uint64_t> hashes;  // of each full block, in order
    std::vector<std::int64_t> tokens;   // one per row
  };
  struct block {
    std::size_t refs = 0;
    std::optional<std::uint64_t> hash;  // registered under it
    std::uint64_t released = 0;         // when it last became evictable (0: never)
    bool evictable = false;
  };
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }

  sequence& find(seq_id s) { return find_sequence(seqs_, s, "prefix")->second; }
  const sequence& find(seq_id s) const { return find_sequence(seqs_, s, "prefix")->second; }
  Eigen::Index first_row(std::size_t b) const { return static_cast<Eigen::Index>(b * block_size_); }
  Eigen::Index slot(const sequence& s, std::size_t i) const {
    return first_row(s.blocks[i / block_size_]) + static_cast<Eigen::Index>(i % block_size_);
  }
  bool must_copy(const sequence& s) const {
    if (s.tokens.size() % block_size_ == 0) return false;
    const block& last = blocks_[s.blocks.back()];
    return last.refs > 1 || (Rules::copy_registered && last.hash);
  }
  std::size_t blocks_needed(const sequence& s, std::size_t n) const {
    const std::size_t room = s.blocks.size() * block_size_ - s.tokens.size();
    return (must_copy(s) ? 1 : 0) + (n > room ? (n - room + block_size_ - 1) / block_size_ : 0);
  }

  /// A cached block found by a create is held again, so no longer evictable.
  void use(std::size_t b) {
    block& x = blocks_[b];
    if (x.evictable) evictable_.erase({x.released, b}), x.evictable = false;
    ++x.refs;
  }
  /// One table fewer holds b: a registered block becomes evictable, any other unheld block free.
  void unuse(std::size_t b) {
    block& x = blocks_[b];
    --x.refs;
    if (x.hash && Rules::evictable(x.refs)) {
      if (x.evictable) return;
      if (Rules::refresh_on_reuse || x.released == 0) x.released = ++clock_;
      evictable_.insert({x.released, b}), x.evictable = true;
    } else if (x.refs == 0) {
      free_.push_back(b);
    }
  }

  /// `n` blocks: free ones first, then the least recently released evictable ones; none when
  /// both together do not suffice (nothing changes).
  std::vector<std::size_t> take(std::size_t n) {
    if (n > free_.size() + evictable_.size())
      throw capacity_error("append: pool exhausted (free and evictable blocks)");
    std::vector<std::size_t> out;
    for (; out.size() < n && !free_.empty(); free_.pop_back()) out.push_back(free_.back());
    while (out.size() < n) out.push_back(evict_oldest());
    std::reverse(out.begin(), out.end());  // handed out from the back: free blocks first
    return out;
  }
  std::size_t evict_oldest() {
    const std::size_t b = evictable_.begin()->second;
    evictable_.erase(evictable_.begin());
    block& x = blocks_[b];
    if (Rules::forget_on_evict) cached_.erase(*x.hash);
    x.hash.reset(), x.evictable = false, x.released = 0;
    return b;
  }

  void copy_last(sequence& s, std::size_t to) {
    const std::size_t from = s.blocks.back();
    const auto rows = static_cast<Eigen::Index>(s.tokens.size() % block_size_);
    k_.middleRows(first_row(to), rows) = k_.middleRows(first_row(from), rows);
    v_.middleRows(first_row(to), rows) = v_.middleRows(first_row(from), rows);
    unuse(from);
    s.blocks.back() = to, blocks_[to].refs = 1;
  }

  /// Registers s's last block under its hash chain once it is full (a block whose hash is already
  /// cached elsewhere stays unregistered: the first one is the cache's).
  void register_if_full(sequence& s) {
    const std::size_t filled = (s.tokens.size() - 1) % block_size_ + 1;
    if (!Rules::cacheable(filled, block_size_)) return;
    // The full blocks before the last one all have their hash: the last one's parent is the last of them.
    const std::uint64_t parent = s.hashes.size() + 1 == s.blocks.size() && !s.hashes.empty() ? s.hashes.back() : 0;
    const auto own = std::span<const std::int64_t>(s.tokens).subspan(s.tokens.size() - filled, filled);
    const std::uint64_t h = Rules::block_hash(parent, own);
    if (filled == block_size_) s.hashes.push_back(h);
    if (cached_.emplace(h, s.blocks.back()).second) blocks_[s.blocks.back()].hash = h;
  }

  row_matrix gather(const row_matrix& pool, const sequence& s) const {
    row_matrix out(static_cast<Eigen::Index>(s.tokens.size()), pool.cols());
    for (std::size_t i = 0; i < s.tokens.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = pool.row(slot(s, i));
    return out;
  }

  std::size_t block_size_;
  row_matrix k_, v_;  // block b holds rows [b * block_size, (b + 1) * block_size)
  std::vector<block> blocks_;
  std::vector<std::size_t> free_;
  std::set<std::pair<std::uint64_t, std::size_t>> evictable_;  // (released, block): least recently released first
  std::uint64_t clock_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> cached_;  // hash chain -> registered block
  std::map<seq_id, sequence> seqs_;
  seq_id next_id_ = 0;
  std::size_t hit_rows_ = 0;
};

using prefix = basic_prefix<>;

}  // namespace kvconform
