// acme's prefix-caching KV cache (kvconform kind prefix): full blocks found again by their tokens, evicted LRU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "acme_support.h"
#include "block_cache.h"

namespace acme {

/// Hashes a token prefix (FNV-1a over the tokens). The table compares whole prefixes on a match,
/// so two prefixes that share a hash are never confused.
struct tokens_hash {
  std::size_t operator()(const std::vector<std::int64_t>& tokens) const {
    std::uint64_t h = 14695981039346656037ull;
    for (const std::int64_t t : tokens) h = (h ^ static_cast<std::uint64_t>(t)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

/// block_cache's pool (fork shares, copy-on-write of a shared, partly filled last block), plus
/// prefix caching: a block that fills is cached under its sequence's tokens up to its end (the hash chain),
/// unless that prefix is cached already; create(tokens) starts with the cached blocks of the
/// longest cached prefix of whole blocks; a cached block no table holds stays evictable until an
/// append needs it (free blocks go first, then the least recently released). Every refusal is
/// decided before the first change.
class prefix_cache {
 public:
  using sequence_id = std::uint32_t;

  prefix_cache(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : bs_(block_size),
        dk_(d_k),
        dv_(d_v),
        keys_(num_blocks * block_size * d_k),
        values_(num_blocks * block_size * d_v),
        refs_(num_blocks, 0),
        chain_(num_blocks) {
    for (std::size_t b = num_blocks; b > 0; --b) free_.push_back(b - 1);
  }

  /// Never refused: the hits are held, not allocated.
  sequence_id create(std::span<const std::int64_t> tokens) {
    sequence q;
    for (std::size_t end = bs_; end <= tokens.size(); end += bs_) {
      const auto it =
          cached_.find(std::vector<std::int64_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(end)));
      if (it == cached_.end()) break;
      const std::size_t b = it->second;
      if (refs_[b]++ == 0) evictable_.erase(std::find(evictable_.begin(), evictable_.end(), b));
      q.blocks.push_back(b);
    }
    q.len = q.blocks.size() * bs_;
    q.tokens.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(q.len));
    hit_rows_ += q.len;
    seqs_[next_] = std::move(q);
    return next_++;
  }

  std::optional<sequence_id> fork(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return std::nullopt;
    for (std::size_t b : it->second.blocks) ++refs_[b];
    seqs_[next_] = it->second;
    return next_++;
  }

  /// Last block first, so that a sequence's tail is evicted before the prefix others may share.
  status release(sequence_id s) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    const std::vector<std::size_t>& blocks = it->second.blocks;
    for (auto b = blocks.rbegin(); b != blocks.rend(); ++b)
      if (--refs_[*b] == 0) (chain_[*b].empty() ? free_ : evictable_).push_back(*b);
    seqs_.erase(it);
    return {};
  }

  /// One token per step. Takes every block it needs before writing, so that a block evicted for
  /// this append is no longer cached when the blocks it writes fill.
  status append(sequence_id s, kvconform::array_view k, kvconform::array_view v, std::span<const std::int64_t> tokens) {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return status(code::no_such);
    const auto n = append_steps(k, v, dk_, dv_);
    if (!n || tokens.size() != *n) return status(code::bad_shape);
    if (*n == 0) return {};
    sequence& q = it->second;
    const bool copy = q.len % bs_ != 0 && refs_[q.blocks.back()] > 1;
    const std::size_t room = q.blocks.size() * bs_ - q.len;
    const std::size_t need = (copy ? 1 : 0) + (*n > room ? (*n - room + bs_ - 1) / bs_ : 0);
    if (need > free_.size() + evictable_.size()) return status(code::full);
    std::vector<std::size_t> taken;
    for (std::size_t i = 0; i < need; ++i) taken.push_back(take());
    auto next = taken.begin();
    if (copy) {
      const std::size_t from = q.blocks.back(), filled = q.len % bs_;
      std::copy_n(row(keys_, dk_, from * bs_), filled * dk_, row(keys_, dk_, *next * bs_));
      std::copy_n(row(values_, dv_, from * bs_), filled * dv_, row(values_, dv_, *next * bs_));
      --refs_[from];
      q.blocks.back() = *next++;
    }
    for (std::size_t i = 0; i < *n; ++i) {
      if (q.len % bs_ == 0) q.blocks.push_back(*next++);
      const std::size_t slot = q.blocks.back() * bs_ + q.len % bs_;
      std::copy_n(k.data + i * dk_, dk_, row(keys_, dk_, slot));
      std::copy_n(v.data + i * dv_, dv_, row(values_, dv_, slot));
      q.tokens.push_back(tokens[i]);
      if (++q.len % bs_ == 0) remember(q.blocks.back(), q.tokens);
    }
    return {};
  }

  result<decoded> decode_step(sequence_id s, kvconform::array_view q) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return code::no_such;
    if (q.rank != 1 || q.dims[0] != dk_) return code::bad_shape;
    if (it->second.len == 0) return code::empty;
    const block_view k = keys(s), v = values(s);
    return attend(
        it->second.len, dk_, dv_, q.data, [&](std::size_t i) { return k.row(i); },
        [&](std::size_t i) { return v.row(i); });
  }

  /// An unknown sequence has no rows and no blocks.
  block_view keys(sequence_id s) const { return view(keys_, dk_, s); }
  block_view values(sequence_id s) const { return view(values_, dv_, s); }
  const std::vector<std::size_t>& block_table(sequence_id s) const {
    const auto it = seqs_.find(s);
    return it == seqs_.end() ? no_blocks_ : it->second.blocks;
  }

  std::size_t num_blocks() const { return refs_.size(); }
  std::size_t free_blocks() const { return free_.size(); }
  std::size_t evictable_blocks() const { return evictable_.size(); }
  std::size_t ref_count(std::size_t block) const { return block < refs_.size() ? refs_[block] : 0; }
  /// Rows every create so far found cached.
  std::size_t hit_rows() const { return hit_rows_; }

 private:
  struct sequence {
    std::vector<std::size_t> blocks;
    std::vector<std::int64_t> tokens;  // one per row: the key of each block that fills
    std::size_t len = 0;
  };

  /// Callers have checked that a free or evictable block exists; an evicted block is forgotten.
  std::size_t take() {
    std::size_t b = 0;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = evictable_.front();
      evictable_.erase(evictable_.begin());
      cached_.erase(chain_[b]);
      chain_[b].clear();
    }
    refs_[b] = 1;
    return b;
  }
  /// The first block cached under a prefix stays its entry.
  void remember(std::size_t block, const std::vector<std::int64_t>& prefix) {
    if (cached_.emplace(prefix, block).second) chain_[block] = prefix;
  }
  static double* row(std::vector<double>& pool, std::size_t width, std::size_t slot) {
    return pool.data() + slot * width;
  }
  block_view view(const std::vector<double>& pool, std::size_t width, sequence_id s) const {
    const auto it = seqs_.find(s);
    if (it == seqs_.end()) return {pool.data(), &no_blocks_, bs_, 0, width};
    return {pool.data(), &it->second.blocks, bs_, it->second.len, width};
  }

  std::size_t bs_, dk_, dv_;
  std::vector<double> keys_, values_;             // the pool: block b holds rows [b * bs, (b + 1) * bs)
  std::vector<std::size_t> refs_;                 // per block: the tables that hold it
  std::vector<std::vector<std::int64_t>> chain_;  // per block: the prefix it is cached under, or empty
  std::vector<std::size_t> free_;                 // blocks neither held nor cached
  std::vector<std::size_t> evictable_;            // cached blocks no table holds, least recently released first
  std::unordered_map<std::vector<std::int64_t>, std::size_t, tokens_hash> cached_;
  std::map<sequence_id, sequence> seqs_;
  sequence_id next_ = 0;
  std::size_t hit_rows_ = 0;
  std::vector<std::size_t> no_blocks_;
};

}  // namespace acme
