// The rules of a prefix cache that bugs get wrong, and its policies; mutants replace one (impls/prefix/mutants/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kvconform {

/// What a prefix cache does with a block that fills under a chain already registered (the policy `duplicates`).
enum class prefix_duplicates { first, registered, adopted };

/// The rules of a prefix cache that bugs get wrong, and its policies. Mutants replace one (impls/prefix/mutants/).
struct prefix_rules {
  /// The hash of a full block: its parent's hash chained with its own tokens, so equal blocks
  /// after different prefixes differ.
  static std::uint64_t block_hash(std::uint64_t parent, std::span<const std::int64_t> tokens) {
    std::uint64_t h = parent ^ 0x9e3779b97f4a7c15ull;
    for (const std::int64_t t : tokens)
      for (int byte = 0; byte < 8; ++byte)
        h = (h ^ ((static_cast<std::uint64_t>(t) >> (8 * byte)) & 0xff)) * 1099511628211ull;
    return h;
  }
  /// Whether a block with `filled` of `block_size` rows may be registered in the cache: full ones only.
  static bool cacheable(std::size_t filled, std::size_t block_size) { return filled == block_size; }
  /// Whether a released block that `refs` tables still hold becomes evictable: only when none do.
  static bool evictable(std::size_t refs) { return refs == 0; }
  /// Whether a block released again after a reuse counts as released now (else: when first released).
  static constexpr bool refresh_on_reuse = true;
  /// Whether eviction forgets the evicted block's hash.
  static constexpr bool forget_on_evict = true;
  /// Whether a registered block a rollback left partly filled is copied before the next write, even by its only
  /// holder: it stays what its hash says for every later hit.
  static constexpr bool copy_registered = true;
  /// Whether a create's extra key seeds its chain, so that equal tokens under other keys never share a block.
  static constexpr bool keyed = true;
  /// Whether a table takes the registered block it adopts in place of its own, before its own goes free.
  static constexpr bool remap_adopted = true;
  /// What an evicted leaf of the radix tree leaves on the evictable count: nothing, each of its blocks is taken off.
  static constexpr std::size_t leaf_count_error = 0;

  // The policies (docs/kinds/prefix.md "Policies"); a cache of other choices declares them.
  /// hit_limit=all_but_last: a hit never covers a create's last token; all_but_last_block: nor its last matched block.
  static constexpr bool all_but_last = false, drop_last_hit = false;
  /// duplicates: a block that fills under a chain already registered is left alone, registered too, or adopted.
  static constexpr prefix_duplicates duplicates = prefix_duplicates::first;
  /// eviction=leaf: whole least recently used leaves of the radix tree go (prefix_tree.h).
  static constexpr bool leaf_eviction = false;
  /// free_order=one_queue: every unheld block in one queue in release order.
  static constexpr bool one_queue = false;
  /// rollback_blocks=kept: a rollback keeps the blocks past the new end in the table until the release.
  static constexpr bool keep_rolled_back = false;

  // The phases (docs/kinds/prefix.md "Phases"), each a rule bugs get wrong.
  /// Whether an admit matches its prompt again (else it holds the blocks its lookup found, whatever became of them).
  static constexpr bool rematch_at_admit = true;
  /// Whether a block an admit takes is registered only once an append has written its rows (else at the admit,
  /// under the chain its prompt gives it).
  static constexpr bool register_after_write = true;
  /// Whether retract and abort let go of registered blocks as a table does (else they free them as the request's).
  static constexpr bool registered_kept = true;
  /// Whether an admit holds every block of its hit (else the last one is left unheld).
  static constexpr bool hold_last_hit = true;
  /// Whether the blocks past a lookup's split are found by later matches (else they are lost to them).
  static constexpr bool split_found = true;
  /// Whether the hit limit cuts the match at a block boundary (else a block whose tokens within it match counts).
  static constexpr bool aligned_limit = true;
};

}  // namespace kvconform
