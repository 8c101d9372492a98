// The reference prefix cache: its pool (prefix_pool.h) with a scheduler's phases (docs/kinds/prefix.md "Phases").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/prefix/prefix_pool.h"

namespace kvconform {

/// A prefix pool whose sequences wait or run (the capability `phases`): lookup(tokens, key) starts a waiting one (its
/// hit found, its runs used and split under eviction=leaf, nothing held), admit(seq, count) matches its prompt again,
/// holds that hit and takes the blocks of its next count rows (capacity_error, nothing changed, when free and
/// evictable blocks besides the hit's are too few), retract(seq) lets go of a running one's blocks and makes it wait
/// again, abort(seq) ends one without the insert of a release. A waiting sequence refuses appends, prefills, decodes,
/// forks, rollbacks and retracts with index_error. Rules choose the policies, and what a phase's bug does.
template <class Rules = prefix_rules>
class basic_prefix : public basic_prefix_pool<Rules> {
  using pool = basic_prefix_pool<Rules>;
  using sequence = typename pool::sequence;

 public:
  using seq_id = typename pool::seq_id;
  using pool::pool;

  /// A new running sequence holding the cached full blocks of the longest cached prefix of `tokens` under `key`: a
  /// lookup and an admit of no rows at once. Never refused.
  seq_id create(std::span<const std::int64_t> tokens, std::int64_t key = 0) {
    sequence s = matched(tokens, key);
    this->hold(s);
    return start(std::move(s), tokens, false);
  }
  /// A new sequence sharing every block of running s that holds rows, and its prompt.
  seq_id fork(seq_id s) {
    running(s, "fork");
    const seq_id child = pool::fork(s);
    prompts_[child] = prompts_.at(s);
    return child;
  }
  void release(seq_id s) {
    pool::release(s);
    forget_phases(s);
  }
  void append(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens) {
    running(s, "append");
    pool::append(s, k, v, tokens);
  }
  decode_result prefill(seq_id s, array_view k, array_view v, std::span<const std::int64_t> tokens, array_view q) {
    running(s, "prefill");
    return pool::prefill(s, k, v, tokens, q);
  }
  void rollback(seq_id s, std::size_t n) {
    running(s, "rollback");
    pool::rollback(s, n);
  }
  decode_result decode_step(seq_id s, array_view q) const {
    if (waiting_.count(s)) throw index_error("decode_step: a waiting sequence");
    return pool::decode_step(s, q);
  }

  /// A new waiting sequence whose prompt is `tokens` under `key`: its hit is found, its runs used and the one it ends
  /// inside split (eviction=leaf), but nothing is held and no block taken. Never refused.
  seq_id lookup(std::span<const std::int64_t> tokens, std::int64_t key = 0) {
    sequence s = matched(tokens, key);
    if (!s.blocks.empty() && Rules::leaf_eviction && !Rules::split_found)  // the rest under a key no match follows
      for (std::size_t b : this->tree_.after_in_run(s.blocks.back())) lost_[b] = *this->blocks_[b].hash;
    if (Rules::leaf_eviction) this->tree_.touch(s.blocks);
    if (Rules::leaf_eviction && !s.blocks.empty()) this->tree_.cut_after(s.blocks.back());
    const std::vector<std::size_t> found = std::move(s.blocks);
    s.blocks.clear(), s.hashes.clear(), s.tokens.clear();
    const seq_id id = start(std::move(s), tokens, true);
    looked_up_[id] = found;
    return id;
  }
  /// Waiting `id` matches its prompt again, holds that hit and takes the blocks of its next `count` rows into its
  /// table; index_error when it is not waiting, capacity_error (nothing changed) when free and evictable blocks
  /// besides the hit's are too few.
  void admit(seq_id id, std::size_t count) {
    if (!waiting_.count(id)) throw index_error("admit: not a waiting sequence");
    const std::vector<std::int64_t>& prompt = prompts_.at(id);
    sequence s = Rules::rematch_at_admit ? matched(prompt, this->seqs_.at(id).key) : as_looked_up(id);
    const std::size_t need = (count + this->block_size_ - 1) / this->block_size_;
    const auto reviving = static_cast<std::size_t>(
        std::count_if(s.blocks.begin(), s.blocks.end(), [&](std::size_t b) { return this->blocks_[b].evictable; }));
    if (need > this->free_blocks() + this->evictable_count_ - reviving)
      throw capacity_error("admit: pool exhausted (free and evictable blocks besides the hit)");
    if (Rules::hold_last_hit || s.blocks.empty()) {
      this->hold(s);  // before the allocation, which may evict
    } else {    // the lock taken from the matched node's parent up
      sequence held = s;
      held.blocks.pop_back(), held.tokens.resize(held.blocks.size() * this->block_size_);
      this->hold(held);
      if (Rules::leaf_eviction) this->tree_.touch(s.blocks), this->tree_.cut_after(s.blocks.back());
      this->hit_rows_ += this->block_size_;
    }
    std::vector<std::size_t> fresh = this->take(need);
    ++this->ops_;
    while (!fresh.empty()) s.blocks.push_back(fresh.back()), this->blocks_[fresh.back()].refs = 1, fresh.pop_back();
    if (!Rules::register_after_write) register_taken(s, prompt);
    this->seqs_.at(id) = std::move(s);
    waiting_.erase(id), looked_up_.erase(id);
    this->settle();
  }
  /// Running `id` lets go of its table without the insert and waits again, its prompt its tokens followed by the rest
  /// of its old prompt; index_error otherwise.
  void retract(seq_id id) {
    sequence& s = running(id, "retract");
    std::vector<std::int64_t>& prompt = prompts_.at(id);
    std::vector<std::int64_t> next = s.tokens;
    if (prompt.size() > next.size())
      next.insert(next.end(), prompt.begin() + static_cast<std::ptrdiff_t>(next.size()), prompt.end());
    prompt = std::move(next);
    let_go(s.blocks);
    s.blocks.clear(), s.hashes.clear(), s.tokens.clear();
    waiting_.insert(id), looked_up_[id] = {};
    this->settle();
  }
  /// Ends `id`, running or waiting, letting go of its table without the insert; index_error when it is not live.
  void abort(seq_id id) {
    const auto it = find_sequence(this->seqs_, id, "abort");
    let_go(it->second.blocks);
    this->seqs_.erase(it);
    forget_phases(id);
    this->settle();
  }

 protected:
  /// Live, not waiting sequence s; index_error naming `what` otherwise.
  sequence& running(seq_id s, const char* what) {
    if (waiting_.count(s)) throw index_error(std::string(what) + ": a waiting sequence");
    return this->find(s);
  }
  seq_id start(sequence s, std::span<const std::int64_t> prompt, bool wait) {
    const seq_id id = this->next_id_++;
    this->seqs_.emplace(id, std::move(s));
    prompts_[id].assign(prompt.begin(), prompt.end());
    if (wait) waiting_.insert(id);
    this->settle();
    return id;
  }
  void forget_phases(seq_id id) { prompts_.erase(id), waiting_.erase(id), looked_up_.erase(id); }
  /// match, with what the phase rules' bugs do to it.
  sequence matched(std::span<const std::int64_t> tokens, std::int64_t key) const {
    sequence s = this->match(tokens, key);
    s.key = key;
    const std::size_t n = tokens.size();
    if (!Rules::aligned_limit && Rules::all_but_last && n > 0 && n % this->block_size_ == 0 &&
        s.blocks.size() + 1 == n / this->block_size_) {  // the limited key matches the last block by its first tokens
      const std::uint64_t h = Rules::block_hash(s.hashes.empty() ? s.seed : s.hashes.back(),
                                                tokens.subspan(n - this->block_size_, this->block_size_));
      if (const auto hit = this->cached_.find(h); hit != this->cached_.end() && !hit->second.empty())
        s.blocks.push_back(hit->second.front()), s.hashes.push_back(h), s.tokens.assign(tokens.begin(), tokens.end());
    }
    for (std::size_t j = 0; j < s.blocks.size(); ++j)
      if (const auto lost = lost_.find(s.blocks[j]);
          lost != lost_.end() && this->blocks_[lost->first].hash == lost->second) {
        s.blocks.resize(j), s.hashes.resize(j), s.tokens.resize(j * this->block_size_);
        break;
      }
    return s;
  }
  /// The blocks waiting id's lookup found, with its prompt's tokens and chains, whatever became of them.
  sequence as_looked_up(seq_id id) const {
    sequence s = this->seqs_.at(id);
    s.blocks = looked_up_.count(id) ? looked_up_.at(id) : std::vector<std::size_t>{};
    const auto& prompt = prompts_.at(id);
    s.tokens.assign(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(s.blocks.size() * this->block_size_));
    for (std::size_t j = 0; j < s.blocks.size(); ++j)
      s.hashes.push_back(
          Rules::block_hash(j ? s.hashes.back() : s.seed,
                            std::span<const std::int64_t>(s.tokens).subspan(j * this->block_size_, this->block_size_)));
    return s;
  }
  /// Blocks a table lets go of without the insert: registered ones stay cached (evictable once no table holds them).
  void let_go(const std::vector<std::size_t>& blocks) {
    for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
      if (Rules::registered_kept || !this->blocks_[*b].hash)
        this->unuse(*b);
      else if (--this->blocks_[*b].refs == 0)
        this->free_.push_back(*b);  // still registered: its chain finds rows the pool will overwrite
    }
  }
  /// Registers the blocks an admit took under the chains of the prompt they will hold, before any row is written.
  void register_taken(const sequence& s, const std::vector<std::int64_t>& prompt) {
    std::uint64_t parent = s.hashes.empty() ? s.seed : s.hashes.back();
    for (std::size_t j = s.hashes.size(); j < s.blocks.size() && (j + 1) * this->block_size_ <= prompt.size(); ++j) {
      parent = Rules::block_hash(
          parent, std::span<const std::int64_t>(prompt).subspan(j * this->block_size_, this->block_size_));
      auto& entry = this->cached_[parent];
      if (!entry.empty()) continue;
      entry.push_back(s.blocks[j]), this->blocks_[s.blocks[j]].hash = parent;
      if (Rules::leaf_eviction)
        this->tree_.add(s.blocks[j], j > 0 ? std::optional(s.blocks[j - 1]) : std::nullopt, this->ops_);
    }
  }

  std::map<seq_id, std::vector<std::int64_t>> prompts_;  // every live sequence's prompt
  std::set<seq_id> waiting_;
  std::map<seq_id, std::vector<std::size_t>> looked_up_;  // waiting sequence -> the blocks its lookup found
  std::map<std::size_t, std::uint64_t> lost_;             // split_found=false: blocks no match follows, by chain
};

using prefix = basic_prefix<>;

}  // namespace kvconform
