// One tier of the reference tiered cache: slots of packed rows [k v], and its entries by hash chain.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include <kvconform/errors.h>

namespace kvconform {

/// An entry of a tier: its slot, whether its copy is done, the pending transfers reading it, when it was last
/// used, and its chain's tokens (for the observation).
struct tier_entry {
  std::size_t slot = 0;
  bool ready = false;
  int pins = 0;
  std::uint64_t used = 0;
  std::vector<std::int64_t> chain;
};

/// A tier's slots by state, and the rows its loads brought.
struct tier_counts {
  std::size_t free = 0, cached = 0, pinned = 0, pending = 0, hit_rows = 0;
};

/// One tier: `slots` slots of `rows` packed rows, each row k then v (the tier's own layout), and its entries by the
/// hash chain of their last device block.
struct tier_store {
  using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::size_t slots = 0, rows = 0, hit_rows = 0;
  row_matrix data;
  std::map<std::uint64_t, tier_entry> entries;
  std::vector<std::size_t> free;

  static bool among(std::uint64_t key, const std::vector<std::uint64_t>& keys) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }
  void init(std::size_t n, std::size_t r, std::size_t width) {
    slots = n, rows = r;
    data = row_matrix::Zero(static_cast<Eigen::Index>(n * r), static_cast<Eigen::Index>(width));
    for (std::size_t i = n; i > 0; --i) free.push_back(i - 1);
  }
  bool ready(std::uint64_t key) const {
    const auto it = entries.find(key);
    return it != entries.end() && it->second.ready;
  }
  template <class K, class V>
  void pack(std::size_t slot, std::size_t r, const K& k, const V& v) {
    const auto row = static_cast<Eigen::Index>(slot * rows + r);
    data.row(row).head(k.size()) = k;
    data.row(row).tail(v.size()) = v;
  }
  /// Packed row r of a slot into k and v, the key being its first d_k entries and the value starting at
  /// `value_from` (d_k, unless a mutant reads another layout).
  template <class K, class V>
  void unpack(std::size_t slot, std::size_t r, K&& k, V&& v, std::size_t d_k, std::size_t value_from) const {
    const auto row = data.row(static_cast<Eigen::Index>(slot * rows + r));
    k = row.segment(0, static_cast<Eigen::Index>(d_k));
    v = row.segment(static_cast<Eigen::Index>(value_from), v.size());
  }
  /// Entries `may(key, entry)` lets go, but for `except`.
  template <class May>
  std::size_t count_if(May may, const std::vector<std::uint64_t>& except) const {
    std::size_t n = 0;
    for (const auto& [key, e] : entries) n += may(key, e) && !among(key, except);
    return n;
  }
  /// Evicts the least recently used of them (one must exist): its slot is free again.
  template <class May>
  void evict_lru(May may, const std::vector<std::uint64_t>& except) {
    auto victim = entries.end();
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (may(it->first, it->second) && !among(it->first, except) &&
          (victim == entries.end() || it->second.used < victim->second.used))
        victim = it;
    free.push_back(victim->second.slot);
    entries.erase(victim);
  }
  /// A free slot, evicting the least recently used entry `may` lets go (never one of `except`) when none is free.
  template <class May>
  std::size_t take_slot(May may, const std::vector<std::uint64_t>& except) {
    if (free.empty()) {
      if (count_if(may, except) == 0) throw capacity_error("the tier has no free or evictable slot");
      evict_lru(may, except);
    }
    const std::size_t slot = free.back();
    free.pop_back();
    return slot;
  }
  void drop(std::uint64_t key, bool free_slot) {
    if (free_slot) free.push_back(entries.at(key).slot);
    entries.erase(key);
  }
  tier_counts counts() const {
    tier_counts c{free.size(), 0, 0, 0, hit_rows};
    for (const auto& [key, e] : entries) ++(e.ready ? (e.pins > 0 ? c.pinned : c.cached) : c.pending);
    return c;
  }
  /// Slot `from` of `other` copied into slot `to` (a store to disk, a load from it).
  void copy_slot(std::size_t to, const tier_store& other, std::size_t from) {
    const auto n = static_cast<Eigen::Index>(rows);
    data.middleRows(static_cast<Eigen::Index>(to) * n, n) =
        other.data.middleRows(static_cast<Eigen::Index>(from) * n, n);
  }
};

}  // namespace kvconform
