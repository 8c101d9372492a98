// The model of the tiered kind: prefix's device pool, a host and a disk tier, and the transfers between them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "oracle/models/prefix_model.h"

namespace kvconform {

/// A prefix pool (prefix_model, its policies hit_limit, duplicates and free_order) with a host tier of
/// config.host_blocks tier blocks and an optional disk tier of config.disk_blocks, a tier block being host_factor
/// device blocks (F rows), keyed by its chain: every token up to its end. Transfers are numbered by the store and
/// load ops before them; each is pending until a complete or a fail names it (docs/kinds/tiered.md):
/// - a host store holds its F rows' device blocks like a table until it ends, and its entry is pending (no hit,
///   never evicted); a disk store pins its host entry;
/// - a host load takes the device blocks past the sequence's rows into its table at once and pins its host entries;
///   the rows arrive (and are registered) at its completion; a disk load brings disk entries into pending host
///   entries. A sequence with a load pending refuses every op with `pending`.
/// Entries are evicted least recently used first, never while pinned or pending.
class tiered_model final : public prefix_model {
 public:
  tiered_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {});

  enum class direction { store_host, store_disk, load_host, load_disk };
  using chain = std::vector<std::int64_t>;
  struct transfer {
    direction dir;
    std::int64_t seq = -1;
    std::vector<std::int64_t> blocks;  ///< device blocks: a host store's sources, a host load's destinations
    std::vector<chain> chains;         ///< tier entries: a store's destination, a load's sources
    std::vector<row> keys, values;     ///< a store's rows, final when it begins (its sources are held)
    std::size_t from = 0;              ///< a load: the sequence's rows when it began
  };
  const std::map<std::int64_t, transfer>& pending() const { return pending_; }
  /// The number the next store or load op's transfer gets.
  std::int64_t transfers() const { return transfers_; }
  bool loading(std::int64_t h) const { return loading_.count(h) != 0; }
  /// Rows per tier block (F = host_factor x block_size).
  std::size_t tier_rows() const { return tier_rows_; }
  /// Host entries an evict could take now.
  std::size_t host_evictable() const { return evictable_entries(host_); }
  /// Whether tier 1 (host) or 2 (disk) holds `c` ready.
  bool ready(int tier, const chain& c) const;
  /// What the last op did that the coverage probe counts (docs/kinds/tiered.md "Coverage events").
  struct tier_facts {
    bool source_kept = false;   ///< after the op, a pending store alone holds a device block
    bool out_of_order = false;  ///< a completion while an older transfer was pending
    bool order_refused = false;
    bool duplicate_store = false;
    bool store_failed = false;
    bool load_failed = false;
    bool load_aborted = false;
    bool host_hit = false;   ///< a host load completed
    bool disk_hit = false;   ///< a disk load completed
    bool wide = false;       ///< a transfer of tier blocks of several device blocks completed
    bool straddles = false;  ///< a host load began inside a tier block whose first rows the device holds
    bool entry_evicted = false;
    bool put = false;
  };
  const tier_facts& tier_last() const { return facts_; }

 private:
  struct entry {
    bool ready = false;
    int pins = 0;
    std::uint64_t used = 0;
    std::optional<stored_stream> rows;  // when ready
  };
  struct tier {
    std::size_t capacity = 0;
    std::map<chain, entry> entries;
    std::int64_t hit_rows = 0;
    const char* name = "";
  };

  std::optional<expectation> own_op(const op& o) override;
  void count(snapshot& out) const override;
  void finished(const op& o) override;

  expectation store(const op& o);
  expectation load(const op& o);
  expectation complete(const op& o);
  expectation fail(const op& o);
  expectation evict_op(const op& o);
  expectation put(const op& o);
  /// A `capacity` refusal for want of room in tier t, noting when pinned or pending entries took it.
  expectation room_refusal(const tier& t);
  /// The refusal of an op naming a sequence whose load is pending: `pending`, with what else it has wrong.
  expectation pending_refusal(const op& o);

  tier& tier_of(std::int64_t t) { return t == 1 ? host_ : disk_; }
  bool has_tier(std::int64_t t) const { return t == 1 || (t == 2 && disk_.capacity > 0); }
  chain chain_to(const std::vector<std::int64_t>& tokens, std::size_t end) const {
    return {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  /// Whether entry `c` of tier `t` may be evicted: ready, unpinned and (host_eviction=device_absent, host) its last
  /// device block's chain no longer registered on the device.
  bool evictable(const tier& t, const chain& c, const entry& e) const;
  std::size_t evictable_entries(const tier& t, const std::vector<chain>& except = {}) const;
  void evict_lru(tier& t, const std::vector<chain>& except = {});
  /// Room for `n` new entries: free slots, then least recently used evictable ones (never one of `except`); false,
  /// changing nothing, when they do not suffice.
  bool make_room(tier& t, std::size_t n, const std::vector<chain>& except = {});
  void make_ready(tier& t, const chain& c, const std::vector<row>& keys, const std::vector<row>& values);
  void end(std::int64_t id);
  /// The transfers' own direction queue (completion_order=fifo): a transfer of the same direction begun earlier.
  bool older_pending(std::int64_t id) const;

  std::size_t tier_rows_;
  bool fifo_, abort_, device_absent_;
  tier host_, disk_;
  std::map<std::int64_t, transfer> pending_;
  std::map<std::int64_t, std::int64_t> loading_;  // sequence -> its pending load
  std::int64_t transfers_ = 0;
  std::uint64_t tick_ = 0;  // an entry's use
  tier_facts facts_;
};

}  // namespace kvconform
