// Mutants of prefix caching (docs/mutants.md), each one rule of impls/prefix/prefix.h gotten wrong.
#pragma once

#include "impls/prefix/prefix.h"

namespace kvconform::mutants {

/// prefix-hash-without-parent: a block is hashed by its own tokens only, so equal blocks after
/// different prefixes collide and a create finds rows another prefix computed.
struct hash_without_parent_rules : prefix_rules {
  static std::uint64_t block_hash(std::uint64_t, std::span<const std::int64_t> tokens) {
    return prefix_rules::block_hash(0, tokens);
  }
};
using prefix_hash_without_parent = basic_prefix<hash_without_parent_rules>;

/// prefix-partial-block-shared: a partly filled block is registered and found as if it were full.
struct partial_block_shared_rules : prefix_rules {
  static bool cacheable(std::size_t filled, std::size_t) { return filled > 0; }
};
using prefix_partial_block_shared = basic_prefix<partial_block_shared_rules>;

/// prefix-evicts-referenced: a released block becomes evictable although a fork still holds it.
struct evicts_referenced_rules : prefix_rules {
  static bool evictable(std::size_t) { return true; }
};
using prefix_evicts_referenced = basic_prefix<evicts_referenced_rules>;

/// prefix-lru-not-refreshed: a block released again after a reuse keeps its first release time,
/// so it is evicted before blocks released after it the first time.
struct lru_not_refreshed_rules : prefix_rules {
  static constexpr bool refresh_on_reuse = false;
};
using prefix_lru_not_refreshed = basic_prefix<lru_not_refreshed_rules>;

/// prefix-stale-hash: eviction keeps the evicted block's hash, so the old prefix finds the block
/// after it was handed out again and overwritten.
struct stale_hash_rules : prefix_rules {
  static constexpr bool forget_on_evict = false;
};
using prefix_stale_hash = basic_prefix<stale_hash_rules>;

/// prefix-rollback-writes-registered-block: after a rollback into a registered block, the next append writes into
/// it in place, so the rows its hash stands for change under every later hit.
struct rollback_writes_registered_rules : prefix_rules {
  static constexpr bool copy_registered = false;
};
using prefix_rollback_writes_registered = basic_prefix<rollback_writes_registered_rules>;

/// prefix-ignores-extra-key: a create's extra key (an adapter, a tenant's salt) is dropped from the chain, so equal
/// tokens under another tenant's key find its blocks: rows leak between tenants.
struct ignores_extra_key_rules : prefix_rules {
  static constexpr bool keyed = false;
};
using prefix_ignores_extra_key = basic_prefix<ignores_extra_key_rules>;

}  // namespace kvconform::mutants
