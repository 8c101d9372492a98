// Mutants of a radix cache (docs/mutants.md), each one rule of its prefix pool gotten wrong after a report.
#pragma once

#include "impls/radix/radix.h"

namespace kvconform::mutants {

/// radix-admit-stale-hit (vLLM #37076, PR #37164): an admit holds the pages its lookup found, though another
/// request's allocation evicted them and wrote its own rows there in between.
struct admit_stale_hit_rules : radix_rules {
  static constexpr bool rematch_at_admit = false;
};
using radix_admit_stale_hit = basic_radix<admit_stale_hit_rules>;

/// radix-registers-before-write (vLLM PR #37152): the pages an admit takes are registered under its prompt's chains
/// at once, so that a request admitted before the forward pass hits rows never written.
struct registers_before_write_rules : radix_rules {
  static constexpr bool register_after_write = false;
};
using radix_registers_before_write = basic_radix<registers_before_write_rules>;

/// radix-retract-frees-tree-pages (SGLang PR #38355): a retract or an abort frees every page of the request, also
/// those a chunk's insert put in the tree, which then hands out rows the pool has overwritten.
struct retract_frees_tree_pages_rules : radix_rules {
  static constexpr bool registered_kept = false;
};
using radix_retract_frees_tree_pages = basic_radix<retract_frees_tree_pages_rules>;

/// radix-lock-skips-matched-node (mini-sglang PR #52): the lock starts at the matched node's parent, so the hit's
/// last page stays evictable while the request reads it.
struct lock_skips_matched_node_rules : radix_rules {
  static constexpr bool hold_last_hit = false;
};
using radix_lock_skips_matched_node = basic_radix<lock_skips_matched_node_rules>;

/// radix-duplicate-freed-unmapped (mini-sglang PR #142): a duplicate page is freed while the request's table still
/// points at it, instead of the tree's page taking its place first.
struct duplicate_freed_unmapped_rules : radix_rules {
  static constexpr bool remap_adopted = false;
};
using radix_duplicate_freed_unmapped = basic_radix<duplicate_freed_unmapped_rules>;

/// radix-evictable-by-key-length (SGLang PR #10637): an evicted leaf takes its key's length off the evictable size,
/// where its value's was added; EAGLE's bigram keys are one shorter, so each eviction leaves one behind.
struct evictable_by_key_length_rules : radix_rules {
  static constexpr std::size_t leaf_count_error = 1;
};
using radix_evictable_by_key_length = basic_radix<evictable_by_key_length_rules>;

/// radix-split-child-stale-key (SGLang PR #36696): the part of a node past a lookup's split hangs under a key no
/// later match follows, so the pages it holds are never found again.
struct split_child_stale_key_rules : radix_rules {
  static constexpr bool split_found = false;
};
using radix_split_child_stale_key = basic_radix<split_child_stale_key_rules>;

/// radix-unaligned-limit-match (SGLang PR #28692): under hit_limit=all_but_last the match key is cut to all but the
/// last token and not aligned to a page, so a prompt of whole pages hits its last page too.
struct unaligned_limit_match_rules : radix_rules {
  static constexpr bool all_but_last = true, aligned_limit = false;
};
using radix_unaligned_limit_match = basic_radix<unaligned_limit_match_rules>;

}  // namespace kvconform::mutants
