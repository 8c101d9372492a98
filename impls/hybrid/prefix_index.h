// The blocks a hybrid cache has registered under token prefixes, per group: what a create's prefix hit finds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace kvconform {

/// The first n tokens of t.
inline std::vector<std::int64_t> token_prefix(std::span<const std::int64_t> t, std::size_t n) {
  return {t.begin(), t.begin() + static_cast<std::ptrdiff_t>(n)};
}

/// Full blocks of the full (0) and sliding (1) groups by the tokens up to their end, while a table holds them.
class hybrid_prefix_index {
 public:
  using tokens = std::vector<std::int64_t>;
  std::optional<std::size_t> find(std::size_t group, const tokens& prefix) const {
    const auto it = by_prefix_[group].find(prefix);
    return it == by_prefix_[group].end() ? std::nullopt : std::optional<std::size_t>(it->second);
  }
  /// Registers block b of `group` under `prefix`, unless either is registered already (the first block keeps it).
  void add(std::size_t group, tokens prefix, std::size_t b) {
    if (by_block_.count(b) || by_prefix_[group].count(prefix)) return;
    by_prefix_[group].emplace(prefix, b);
    by_block_.emplace(b, std::pair{group, std::move(prefix)});
  }
  /// Block b went back to the pool: its prefix is no longer found.
  void forget(std::size_t b) {
    const auto it = by_block_.find(b);
    if (it == by_block_.end()) return;
    by_prefix_[it->second.first].erase(it->second.second);
    by_block_.erase(it);
  }

 private:
  std::map<tokens, std::size_t> by_prefix_[2];
  std::map<std::size_t, std::pair<std::size_t, tokens>> by_block_;
};

}  // namespace kvconform
