// acme's prefix-caching KV cache (kvconform kind prefix): full blocks found again by their tokens, evicted LRU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "acme_support.h"
#include "block_pool.h"

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

struct prefix_sequence {
  std::vector<std::size_t> blocks;
  std::vector<std::int64_t> tokens;  // one per row: the key of each block that fills
  std::size_t len = 0;
};

/// acme's block pool (block_pool.h: fork shares, copy-on-write of a shared, partly filled last block), plus
/// prefix caching: a block that fills is cached under its sequence's tokens up to its end (the hash chain),
/// unless that prefix is cached already; create(tokens) starts with the cached blocks of the
/// longest cached prefix of whole blocks; a cached block no table holds stays evictable until an
/// append needs it (free blocks go first, then the least recently released). Every refusal is
/// decided before the first change.
class prefix_cache : public block_pool<prefix_sequence> {
 public:
  prefix_cache(std::size_t num_blocks, std::size_t block_size, std::size_t d_k, std::size_t d_v)
      : block_pool(num_blocks, block_size, d_k, d_v), chain_(num_blocks) {}

  /// Never refused: the hits are held, not allocated.
  sequence_id create(std::span<const std::int64_t> tokens) {
    prefix_sequence q;
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
    prefix_sequence& q = it->second;
    const std::size_t need = blocks_needed(q, *n);
    if (need > free_.size() + evictable_.size()) return status(code::full);
    std::vector<std::size_t> taken;
    for (std::size_t i = 0; i < need; ++i) taken.push_back(take());
    auto next = taken.begin();
    if (must_copy(q)) copy_last_block(q, *next++);
    for (std::size_t i = 0; i < *n; ++i) {
      if (q.len % bs_ == 0) q.blocks.push_back(*next++);
      write_row(q, k, v, i);
      q.tokens.push_back(tokens[i]);
      if (q.len % bs_ == 0) remember(q.blocks.back(), q.tokens);
    }
    return {};
  }

  std::size_t evictable_blocks() const { return evictable_.size(); }
  /// Rows every create so far found cached.
  std::size_t hit_rows() const { return hit_rows_; }

 private:
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
  std::vector<std::vector<std::int64_t>> chain_;  // per block: the prefix it is cached under, or empty
  std::vector<std::size_t> evictable_;            // cached blocks no table holds, least recently released first
  std::unordered_map<std::vector<std::int64_t>, std::size_t, tokens_hash> cached_;
  std::size_t hit_rows_ = 0;
};

}  // namespace acme
