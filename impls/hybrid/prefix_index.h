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
  /// Whether `group` has registered, for every block j < m of `p` with wanted(j), the block of p's first (j + 1)
  /// block_size tokens.
  template <class Wanted>
  bool registered(std::size_t group, std::span<const std::int64_t> p, std::size_t m, std::size_t block_size,
                  Wanted wanted) const {
    for (std::size_t j = 0; j < m; ++j)
      if (wanted(j) && !find(group, token_prefix(p, (j + 1) * block_size))) return false;
    return true;
  }
  /// `group`'s table for a hit of m blocks of p: the block registered for each j < m with wanted(j), else -1.
  template <class Wanted>
  std::vector<std::ptrdiff_t> table(std::size_t group, std::span<const std::int64_t> p, std::size_t m,
                                    std::size_t block_size, Wanted wanted) const {
    std::vector<std::ptrdiff_t> t(m, -1);
    for (std::size_t j = 0; j < m; ++j)
      if (const auto b = find(group, token_prefix(p, (j + 1) * block_size)); b && wanted(j))
        t[j] = static_cast<std::ptrdiff_t>(*b);
    return t;
  }
  /// Registers the blocks of `group`'s table whose last row an append wrote, rows [from, len) of `t`'s tokens.
  void add_filled(std::size_t group, const std::vector<std::ptrdiff_t>& table, const tokens& t, std::size_t from,
                  std::size_t len, std::size_t block_size) {
    for (std::size_t j = from / block_size; (j + 1) * block_size <= len; ++j)
      if (table[j] >= 0) add(group, token_prefix(t, (j + 1) * block_size), static_cast<std::size_t>(table[j]));
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
