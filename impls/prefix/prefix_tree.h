// The radix tree of a prefix cache that evicts whole leaves (eviction=leaf, SGLang's RadixCache): runs of blocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace kvconform {

/// Runs of registered blocks: the blocks one append registered, split where a create's hit ended inside a run or a
/// chain branched off it, each with its parent run and the time it was last used (made, hit, or its sequence
/// released). Only a run with no child run and no held block is a leaf to evict (docs/kinds/prefix.md).
class prefix_tree {
 public:
  /// Block b, registered by the op `op` right after `parent` (a block of the tree, or none): it extends the run that
  /// op made, or starts a new one, splitting the parent's run when `parent` is not its last block.
  void add(std::size_t b, std::optional<std::size_t> parent, std::uint64_t op) {
    if (parent && run_of_.count(*parent)) {
      const int p = run_of_.at(*parent);
      if (runs_.at(p).made_by == op && runs_.at(p).blocks.back() == *parent) {
        runs_.at(p).blocks.push_back(b), run_of_[b] = p;
        return;
      }
      cut_after(*parent);
      ++runs_.at(p).children;
      runs_[next_] = {{b}, p, 0, ++clock_, op};
    } else {
      runs_[next_] = {{b}, -1, 0, ++clock_, op};
    }
    run_of_[b] = next_++;
  }
  /// The runs holding `blocks` were used now.
  void touch(const std::vector<std::size_t>& blocks) {
    const std::uint64_t now = ++clock_;
    for (std::size_t b : blocks)
      if (const auto r = run_of_.find(b); r != run_of_.end()) runs_.at(r->second).stamp = now;
  }
  /// Splits b's run after b, if b is not its last block: the rest becomes its only child run.
  void cut_after(std::size_t b) {
    const int r = run_of_.at(b);
    auto& blocks = runs_.at(r).blocks;
    const auto at = std::find(blocks.begin(), blocks.end(), b) + 1;
    if (at == blocks.end()) return;
    for (auto& [id, x] : runs_)
      if (x.parent == r) x.parent = next_;
    run rest{{at, blocks.end()}, r, runs_.at(r).children, runs_.at(r).stamp, runs_.at(r).made_by};
    blocks.erase(at, blocks.end()), runs_.at(r).children = 1;
    for (std::size_t x : rest.blocks) run_of_[x] = next_;
    runs_[next_++] = std::move(rest);
  }
  /// The blocks after b in its run (none when b is its last, or in no run).
  std::vector<std::size_t> after_in_run(std::size_t b) const {
    const auto r = run_of_.find(b);
    if (r == run_of_.end()) return {};
    const auto& blocks = runs_.at(r->second).blocks;
    return {std::find(blocks.begin(), blocks.end(), b) + 1, blocks.end()};
  }
  /// After an op: a run whose first blocks alone are held (a rollback into it, a copy of one of its blocks) splits
  /// where the holding ends, so that every run is held whole or not at all.
  void settle(const std::function<bool(std::size_t)>& held) {
    std::vector<std::size_t> cuts;
    for (const auto& [id, r] : runs_) {
      const auto free = std::find_if(r.blocks.begin(), r.blocks.end(), [&](std::size_t b) { return !held(b); });
      if (free != r.blocks.begin() && free != r.blocks.end()) cuts.push_back(*(free - 1));
    }
    for (std::size_t b : cuts) cut_after(b);
  }
  /// Takes the least recently used leaf out of the tree and gives its blocks (nothing when there is none).
  std::vector<std::size_t> pop_leaf(const std::function<bool(std::size_t)>& held) {
    int victim = -1;
    for (const auto& [id, r] : runs_)
      if (r.children == 0 && !held(r.blocks.front()) && (victim < 0 || r.stamp < runs_.at(victim).stamp)) victim = id;
    if (victim < 0) return {};
    run r = std::move(runs_.at(victim));
    runs_.erase(victim);
    if (r.parent >= 0) --runs_.at(r.parent).children;
    for (std::size_t b : r.blocks) run_of_.erase(b);
    return r.blocks;
  }

 private:
  struct run {
    std::vector<std::size_t> blocks;
    int parent = -1;
    std::size_t children = 0;
    std::uint64_t stamp = 0, made_by = 0;
  };
  std::map<int, run> runs_;
  std::map<std::size_t, int> run_of_;
  int next_ = 0;
  std::uint64_t clock_ = 0;
};

}  // namespace kvconform
