// The reference prefix cache's pool: a paged block pool whose full blocks are found again by the hash chain of their
// tokens (impls/prefix/prefix.h adds the phases).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/append_steps.h"
#include "impls/common/attention.h"
#include "impls/common/sequences.h"
#include "impls/prefix/prefix_rules.h"
#include "impls/prefix/prefix_tree.h"

namespace kvconform {

/// A pool of num_blocks blocks of block_size rows shared by sequences, as in the paged cache (fork
/// shares every block holding rows, a write into a shared, partly filled block copies it first, a refused
/// append changes nothing), with automatic prefix caching: each appended step carries its token;
/// a full block is registered under the hash chain of every token up to its end, seeded by the create's
/// extra key; create(tokens, key) starts a sequence with the cached blocks of the longest cached prefix of
/// `tokens`; a released block that is registered stays cached and evictable; when the free blocks run out,
/// an evictable block is evicted (the least recently released, or a whole least recently used leaf of the
/// radix tree). A block is never evicted while referenced. Rules choose the policies.
template <class Rules = prefix_rules>
class basic_prefix_pool {
 public:
  using seq_id = std::size_t;
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  basic_prefix_pool(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : block_size_(block_size),
        k_(row_matrix::Constant(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(d_k),
                                nan())),
        v_(row_matrix::Constant(static_cast<Eigen::Index>(num_blocks * block_size), static_cast<Eigen::Index>(d_v),
                                nan())),
        blocks_(num_blocks) {
    if (block_size == 0 || d_k == 0 || d_v == 0) throw shape_error("prefix: block_size, d_k and d_v must be positive");
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
    if (Rules::one_queue) queue_.assign(free_.rbegin(), free_.rend()), free_.clear();
  }

  /// A new sequence holding the cached full blocks of the longest cached prefix of `tokens` under `key`
  /// (none: an empty sequence). Never refused: a hit takes no block.
  seq_id create(std::span<const std::int64_t> tokens, std::int64_t key = 0) {
    sequence s = match(tokens, key);
    hold(s);
    seqs_.emplace(next_id_, std::move(s));
    settle();
    return next_id_++;
  }

  /// A new sequence sharing every block of s that holds rows.
  seq_id fork(seq_id s) {
    sequence from = find(s);
    from.blocks.resize((from.tokens.size() + block_size_ - 1) / block_size_);
    for (std::size_t b : from.blocks) ++blocks_[b].refs;
    seqs_.emplace(next_id_, from);
    return next_id_++;
  }

  /// Releases s, its blocks from the last to the first: a registered block no table holds becomes
  /// evictable (most recently released last), any other unheld block free.
  void release(seq_id s) {
    const auto it = find_sequence(seqs_, s, "prefix");
    if (Rules::leaf_eviction) insert_path(it->second);
    for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) unuse(*b);
    seqs_.erase(it);
    settle();
  }

  /// Appends n steps to s: k and v 1-D (one step) or 2-D (n steps), and one token per step.
  /// Throws index_error for an unknown s, shape_error for a wrong rank, width, step or token count,
  /// and capacity_error when free and evictable blocks together do not suffice (nothing changes).
  void append(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens) {
    sequence& q = find(s);
    const std::size_t steps = checked_append_steps(k, v, d_k(), d_v());
    if (tokens.size() != steps) throw shape_error("append: k, v and tokens differ in steps");
    if (steps == 0) return;
    const std::size_t from = q.tokens.size(), last = (from + steps - 1) / block_size_;
    std::vector<std::size_t> replaced;  // table entries written that another table holds or the cache keeps as is
    for (std::size_t j = from / block_size_; j <= last && j < q.blocks.size(); ++j)
      if (must_copy(q, j)) replaced.push_back(j);
    std::vector<std::size_t> fresh =
        take(replaced.size() + (last + 1 > q.blocks.size() ? last + 1 - q.blocks.size() : 0));
    for (std::size_t j : replaced) copy_block(q, j, fresh.back()), fresh.pop_back();
    while (!fresh.empty()) q.blocks.push_back(fresh.back()), blocks_[fresh.back()].refs = 1, fresh.pop_back();
    ++ops_;
    for (std::size_t i = 0; i < steps; ++i) {
      const Eigen::Index row = slot(q, q.tokens.size());
      k_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(k.data + i * d_k(), k_.cols());
      v_.row(row) = Eigen::Map<const Eigen::RowVectorXd>(v.data + i * d_v(), v_.cols());
      q.tokens.push_back(tokens[i]);
      register_if_full(q);
    }
    if (Rules::leaf_eviction) insert_path(q);
    settle();
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

  /// Drops the newest n steps of s: blocks past its new end are released as release does (last first), or kept in
  /// its table (rollback_blocks=kept). The block it keeps partly filled stays as it is, registered when it was, so
  /// that the next append copies it first. index_error (and no change) for an unknown s or more steps than it holds.
  void rollback(seq_id s, std::size_t n) {
    sequence& q = find(s);
    if (n > q.tokens.size()) throw index_error("rollback: fewer steps held");
    q.tokens.resize(q.tokens.size() - n);
    q.hashes.resize(q.tokens.size() / block_size_);
    while (!Rules::keep_rolled_back && q.blocks.size() * block_size_ >= q.tokens.size() + block_size_)
      unuse(q.blocks.back()), q.blocks.pop_back();
    settle();
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
  std::size_t free_blocks() const { return Rules::one_queue ? queue_.size() - evictable_count_ : free_.size(); }
  std::size_t evictable_blocks() const { return evictable_count_; }
  /// Rows every create so far found in the cache.
  std::size_t hit_rows() const { return hit_rows_; }

 protected:
  struct sequence {
    std::vector<std::size_t> blocks;
    std::vector<std::uint64_t> hashes;  // of each full block, in order
    std::vector<std::int64_t> tokens;   // one per row
    std::uint64_t seed = 0;             // the chain's start: its create's extra key
    std::int64_t key = 0;               // that key
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
  /// Whether table entry j, which an append writes into, must be copied first: another table holds it, or it is
  /// registered (it stays what its hash says).
  bool must_copy(const sequence& s, std::size_t j) const {
    const block& x = blocks_[s.blocks[j]];
    return (j + 1) * block_size_ > s.tokens.size() && (x.refs > 1 || (Rules::copy_registered && x.hash));
  }

  /// The sequence a create of `tokens` under `key` starts as: the cached full blocks of the longest cached prefix
  /// (hit_limit applied), not yet held.
  sequence match(std::span<const std::int64_t> tokens, std::int64_t key) const {
    sequence s;
    s.seed = Rules::keyed && key != 0 ? prefix_rules::block_hash(0x6b6579, {&key, 1}) : 0;
    const std::size_t limit = Rules::all_but_last && !tokens.empty() ? tokens.size() - 1 : tokens.size();
    for (std::size_t at = 0; at < limit;) {
      const std::size_t n = std::min(block_size_, limit - at);
      if (!Rules::cacheable(n, block_size_)) break;
      const std::uint64_t h = Rules::block_hash(s.hashes.empty() ? s.seed : s.hashes.back(), tokens.subspan(at, n));
      const auto hit = cached_.find(h);
      if (hit == cached_.end() || hit->second.empty()) break;
      s.blocks.push_back(hit->second.front()), s.hashes.push_back(h);  // the earliest registered still cached
      s.tokens.insert(s.tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(at),
                      tokens.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
    }
    if (Rules::drop_last_hit && !s.blocks.empty())  // EAGLE's drafter needs the last block's states again
      s.blocks.pop_back(), s.hashes.pop_back(), s.tokens.resize(s.blocks.size() * block_size_);
    return s;
  }
  /// Matched sequence s holds its blocks: each used, their runs touched and the last one's split after it.
  void hold(const sequence& s) {
    for (std::size_t b : s.blocks) use(b);
    if (Rules::leaf_eviction) tree_.touch(s.blocks);
    if (Rules::leaf_eviction && !s.blocks.empty()) tree_.cut_after(s.blocks.back());  // a hit ending inside a run
    hit_rows_ += s.tokens.size();
  }

  /// A cached block found by a create (or adopted) is held again, so no longer evictable.
  void use(std::size_t b) {
    block& x = blocks_[b];
    if (x.evictable) {
      --evictable_count_, x.evictable = false;
      if (Rules::one_queue) queue_.remove(b);
      if (!Rules::one_queue && !Rules::leaf_eviction) evictable_.erase({x.released, b});
    }
    ++x.refs;
  }
  /// One table fewer holds b: a registered block becomes evictable, any other unheld block free.
  void unuse(std::size_t b) {
    block& x = blocks_[b];
    --x.refs;
    if (x.hash && Rules::evictable(x.refs)) {
      if (x.evictable) return;
      if (Rules::refresh_on_reuse || x.released == 0) x.released = ++clock_;
      x.evictable = true, ++evictable_count_;
      if (Rules::one_queue)
        queue_.push_back(b);
      else if (!Rules::leaf_eviction)
        evictable_.insert({x.released, b});
    } else if (x.refs == 0) {
      if (Rules::one_queue)
        queue_.push_back(b);
      else
        free_.push_back(b);
    }
  }

  /// `n` blocks, none when the blocks the cache could free do not suffice (nothing changes): free ones first, then
  /// the least recently released evictable ones; or the queue's oldest (one_queue); or whole leaves evicted first.
  std::vector<std::size_t> take(std::size_t n) {
    const auto held = [&](std::size_t b) { return blocks_[b].refs > 0; };
    if (n > free_blocks() + evictable_count_)
      throw capacity_error("append: pool exhausted (free and evictable blocks)");
    std::vector<std::size_t> out;
    if (Rules::one_queue) {
      for (; out.size() < n; queue_.pop_front()) out.push_back(queue_.front()), forget(queue_.front());
    } else {
      while (Rules::leaf_eviction && free_.size() < n)
        if (const auto leaf = tree_.pop_leaf(held); !leaf.empty()) {
          for (std::size_t b : leaf) forget(b), free_.push_back(b);
          evictable_count_ += Rules::leaf_count_error;
        } else {  // only a count that drifted from the tree gets here
          throw capacity_error("append: no leaf of the radix tree to evict");
        }
      for (; out.size() < n && !free_.empty(); free_.pop_back()) out.push_back(free_.back());
      while (out.size() < n) {
        const std::size_t b = evictable_.begin()->second;
        evictable_.erase(evictable_.begin());
        forget(b), out.push_back(b);
      }
    }
    std::reverse(out.begin(), out.end());  // handed out from the back: in the order taken
    return out;
  }
  /// eviction=leaf, after an append and at a release: the runs of s's full blocks used now, and the run its last one
  /// ends inside split there (SGLang's insert of the sequence).
  void insert_path(const sequence& s) {
    const std::vector<std::size_t> path(s.blocks.begin(),
                                        s.blocks.begin() + static_cast<std::ptrdiff_t>(s.tokens.size() / block_size_));
    tree_.touch(path);
    if (!path.empty() && blocks_[path.back()].hash) tree_.cut_after(path.back());
  }
  /// eviction=leaf: every run of the tree held whole or not at all, after each op (prefix_tree.h).
  void settle() {
    if (Rules::leaf_eviction) tree_.settle([&](std::size_t b) { return blocks_[b].refs > 0; });
  }
  /// Block b leaves the cache (when registered and evictable): its hash no longer finds it.
  void forget(std::size_t b) {
    block& x = blocks_[b];
    if (!x.evictable) return;
    --evictable_count_;
    if (Rules::forget_on_evict) {
      auto& entry = cached_.at(*x.hash);
      entry.erase(std::find(entry.begin(), entry.end(), b));
      if (entry.empty()) cached_.erase(*x.hash);
    }
    x.hash.reset(), x.evictable = false, x.released = 0;
  }

  /// Table entry j of s replaced by block `to`, with the rows s holds in it.
  void copy_block(sequence& s, std::size_t j, std::size_t to) {
    const std::size_t from = s.blocks[j];
    const std::size_t first = j * block_size_, held = s.tokens.size() > first ? s.tokens.size() - first : 0;
    const auto rows = static_cast<Eigen::Index>(std::min(block_size_, held));
    k_.middleRows(first_row(to), rows) = k_.middleRows(first_row(from), rows);
    v_.middleRows(first_row(to), rows) = v_.middleRows(first_row(from), rows);
    unuse(from);
    s.blocks[j] = to, blocks_[to].refs = 1;
  }

  /// Registers s's last block under its hash chain once it is full; a block whose hash is already cached stays
  /// unregistered (the first one is the cache's), is registered too, or gives way to the cached one (duplicates).
  void register_if_full(sequence& s) {
    const std::size_t filled = (s.tokens.size() - 1) % block_size_ + 1, j = (s.tokens.size() - 1) / block_size_;
    if (!Rules::cacheable(filled, block_size_)) return;
    // The full blocks before this one all have their hash: its parent is the last of them.
    const std::uint64_t parent = s.hashes.size() == j && !s.hashes.empty() ? s.hashes.back() : s.seed;
    const auto own = std::span<const std::int64_t>(s.tokens).subspan(s.tokens.size() - filled, filled);
    const std::uint64_t h = Rules::block_hash(parent, own);
    if (filled == block_size_) s.hashes.push_back(h);
    auto& entry = cached_[h];
    const std::size_t b = s.blocks[j];
    if (!entry.empty() && Rules::duplicates == prefix_duplicates::adopted) {  // the cached block in its place
      use(entry.front());
      if (Rules::remap_adopted) s.blocks[j] = entry.front();
      unuse(b);
      return;
    }
    if (!entry.empty() && Rules::duplicates == prefix_duplicates::first) return;
    entry.push_back(b), blocks_[b].hash = h;
    if (Rules::leaf_eviction) tree_.add(b, j > 0 ? std::optional(s.blocks[j - 1]) : std::nullopt, ops_);
  }

  row_matrix gather(const row_matrix& pool, const sequence& s) const {
    row_matrix out(static_cast<Eigen::Index>(s.tokens.size()), pool.cols());
    for (std::size_t i = 0; i < s.tokens.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = pool.row(slot(s, i));
    return out;
  }

  std::size_t block_size_;
  row_matrix k_, v_;  // block b holds rows [b * block_size, (b + 1) * block_size)
  std::vector<block> blocks_;
  std::size_t evictable_count_ = 0;
  std::vector<std::size_t> free_;
  std::set<std::pair<std::uint64_t, std::size_t>> evictable_;  // (released, block): least recently released first
  std::list<std::size_t> queue_;                               // free_order=one_queue: every unheld block, oldest first
  prefix_tree tree_;                                           // eviction=leaf
  std::uint64_t clock_ = 0, ops_ = 0;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> cached_;  // hash chain -> its blocks, earliest first
  std::map<seq_id, sequence> seqs_;
  seq_id next_id_ = 0;
  std::size_t hit_rows_ = 0;
};

}  // namespace kvconform
