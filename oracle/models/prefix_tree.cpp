// The prefix model's radix tree (eviction=leaf): runs of registered blocks, evicted whole, least recently used first.
#include <algorithm>

#include "oracle/models/prefix_model.h"

namespace kvconform {

void prefix_model::tree_add(const sequence& s, std::size_t j, std::int64_t b) {
  // With duplicates=adopted every full block of a table is registered, so block j - 1's run is b's parent.
  const std::int64_t parent_block = j > 0 ? s.blocks[j - 1] : -1;
  const std::int64_t parent = parent_block < 0 ? -1 : cached_.at(parent_block).node;
  if (parent >= 0 && parent == growing_) {  // the run this op began goes on
    runs_.at(parent).blocks.push_back(b), cached_.at(b).node = parent;
    return;
  }
  if (parent >= 0) {  // a chain that branches off inside a run splits it after the parent block
    cut_after(parent_block);
    ++runs_.at(parent).children;
  }
  growing_ = runs_made_++;
  runs_[growing_] = {{b}, parent, 0, ++clock_};
  cached_.at(b).node = growing_;
}

void prefix_model::cut_after(std::int64_t b) {
  const auto& blocks = runs_.at(cached_.at(b).node).blocks;
  const auto at = static_cast<std::size_t>(std::find(blocks.begin(), blocks.end(), b) - blocks.begin());
  if (at + 1 < blocks.size()) split(cached_.at(b).node, at + 1);
}

void prefix_model::insert_path(const sequence& s) {
  // SGLang's insert after a chunk and at a release (cache_unfinished_req, cache_finished_req) walks the sequence's
  // full blocks, using each run it meets now, and splits the one its last block ends inside.
  const std::vector<std::int64_t> path(
      s.blocks.begin(), s.blocks.begin() + static_cast<std::ptrdiff_t>(s.rows.size() / config_.block_size));
  stamp_runs(path);
  if (!path.empty() && cached_.count(path.back())) cut_after(path.back());
}

void prefix_model::split(std::int64_t r, std::size_t keep) {
  run& head = runs_.at(r);
  const std::int64_t tail = runs_made_++;
  for (auto& [id, other] : runs_)
    if (other.parent == r) other.parent = tail;
  run rest{{head.blocks.begin() + static_cast<std::ptrdiff_t>(keep), head.blocks.end()}, r, head.children, head.stamp};
  head.blocks.resize(keep), head.children = 1;
  for (std::int64_t b : rest.blocks) cached_.at(b).node = tail;
  runs_[tail] = std::move(rest);
  if (growing_ == r) growing_ = tail;
}

void prefix_model::stamp_runs(const std::vector<std::int64_t>& blocks) {
  const std::uint64_t now = ++clock_;
  for (std::int64_t b : blocks)
    if (const auto c = cached_.find(b); c != cached_.end()) runs_.at(c->second.node).stamp = now;
}

bool prefix_model::evictable_leaf(std::int64_t r) const {
  const run& x = runs_.at(r);
  return x.children == 0 && !held(x.blocks.front());  // held whole or not at all (settle)
}

void prefix_model::evict_leaf() {
  std::int64_t victim = -1;
  for (const auto& [id, r] : runs_)  // the least recently used; runs made earlier first among equal stamps
    if (evictable_leaf(id) && (victim < 0 || r.stamp < runs_.at(victim).stamp)) victim = id;
  run r = runs_.at(victim);
  last_.evicted_run = last_.evicted_run || r.blocks.size() > 1;
  for (std::int64_t b : r.blocks) evict(b);
  if (r.parent >= 0) --runs_.at(r.parent).children;
  runs_.erase(victim);
}

void prefix_model::taking(std::size_t n) {
  // SGLang evicts before it allocates, whole leaves until the free blocks suffice (PR #32016: the shortfall).
  const bool locked_first = leaf_ && lock_before_lru();
  while (leaf_ && config_.capacity - held_blocks() - evictable_count_ < n) evict_leaf();
  last_.evicted_under_lock = last_.evicted_under_lock || (locked_first && last_.evicted);
}

bool prefix_model::lock_before_lru() const {
  std::uint64_t oldest_leaf = UINT64_MAX, oldest_held = UINT64_MAX;
  for (const auto& [id, r] : runs_) {
    if (evictable_leaf(id)) oldest_leaf = std::min(oldest_leaf, r.stamp);
    if (held(r.blocks.front())) oldest_held = std::min(oldest_held, r.stamp);
  }
  return oldest_leaf != UINT64_MAX && oldest_held < oldest_leaf;
}

void prefix_model::settle() {
  // A run tables hold the first blocks of only (a rollback into it, a copy of its block) splits where their holding
  // ends, as SGLang's lock would move to a node split there: each run is held whole or not at all.
  std::vector<std::pair<std::int64_t, std::size_t>> cuts;
  for (const auto& [id, r] : runs_) {
    const auto first_free = std::find_if(r.blocks.begin(), r.blocks.end(), [&](std::int64_t b) { return !held(b); });
    if (first_free != r.blocks.begin() && first_free != r.blocks.end())
      cuts.emplace_back(id, static_cast<std::size_t>(first_free - r.blocks.begin()));
  }
  for (const auto& [id, keep] : cuts) split(id, keep);
}

}  // namespace kvconform
