// The prefix kind's token ops and policies as data, shared with the kinds built on its pool (tiered).
#pragma once

#include "properties/trace/kind_spec.h"
#include "properties/trace/policy.h"

namespace kvconform::prefix_vocabulary {

/// The release, append and prefill of a pool whose steps carry tokens.
inline constexpr op_spec release{
    op_kind::release, field_seq,
    "seq's registered blocks stay cached and evictable (last block first); others go free"};
inline constexpr op_spec append{
    op_kind::append, field_k | field_v | field_seq | field_tokens,
    "k and v 1-D or 2-D onto seq with one token per step; free blocks first, then the least recently released "
    "evictable ones; refused (changing nothing) when both together do not suffice"};
inline constexpr op_spec prefill{op_kind::prefill, field_k | field_v | field_q | field_seq | field_tokens,
                                 "an append onto seq with one token per step whose q 2-D (m, d_k) attends causally, "
                                 "step i's query over the rows up to its own"};

/// The phases of a scheduler (docs/kinds/prefix.md "Phases"): a lookup's own fields are its kind's.
inline constexpr const char* lookup_meaning =
    "a new waiting sequence whose prompt is tokens: its hit is found (the runs it meets used, the one it ends inside "
    "split, under eviction=leaf) but not held, and it takes no block";
inline constexpr op_spec admit{
    op_kind::admit, field_seq | field_count,
    "waiting seq matches its prompt again and holds that hit, then takes the blocks of its next count rows; refused "
    "`capacity`, changing nothing, when free and evictable blocks other than the hit's are too few"};
inline constexpr op_spec retract{
    op_kind::retract, field_seq,
    "running seq lets go of every block (no insert) and waits again, its tokens the start of its prompt"};
inline constexpr op_spec abort{op_kind::abort, field_seq,
                               "seq, running or waiting, ends; it lets go of every block without the insert"};

// The points where engines legitimately differ (docs/kinds/prefix.md "Policies"), each default first.
inline constexpr policy_choice hit_limit[] = {
    {"all", "a create finds the longest registered prefix of all its tokens"},
    {"all_but_last", "of all its tokens but the last, which is computed again for its logits",
     "vLLM v1 (get_computed_blocks: max_cache_hit_length = num_tokens - 1), SGLang (Req._compute_max_prefix_len)"},
    {"all_but_last_block", "of all its tokens but the last, less the last block it matches, computed again too",
     "vLLM v1 with EAGLE drafts (FullAttentionManager.find_longest_cache_hit drops the last matched block)"},
};
inline constexpr policy_choice duplicates[] = {
    {"first", "a block that fills under a chain already registered is not registered: the first block stays the entry"},
    {"registered",
     "every block that fills is registered; a create finds the earliest registered block of a chain still cached, and "
     "a released duplicate is evictable",
     "vLLM v1 (BlockHashToBlockMap, the NOTE #1 of block_pool.py, PR #9668)"},
    {"adopted", "the sequence takes the registered block in its table in place of its own, which goes free",
     "SGLang (cache_unfinished_req frees the duplicate pages and re-points req_to_token)"},
};
inline constexpr policy_choice eviction[] = {
    {"block", "an append evicts the least recently released evictable blocks, one block at a time"},
    {"leaf",
     "an append evicts whole leaves of the radix tree, least recently used first: the blocks one append registered, "
     "split where a create's hit, another chain or a sequence's full blocks end",
     "SGLang (RadixCache.evict, LRU by last_access_time)"},
};
inline constexpr policy_choice free_order[] = {
    {"uncached_first", "an append takes blocks that were never registered before evictable ones",
     "vLLM v1 since PR #42656, SGLang"},
    {"one_queue",
     "every block no table holds waits in one queue in release order; an append takes the oldest, evicting it when it "
     "is registered, even while never-registered blocks wait behind it",
     "vLLM v1 before PR #42656"},
};
inline constexpr policy_spec hit_limit_policy{"hit_limit", "how much of a create's tokens its hit may cover",
                                              hit_limit};
inline constexpr policy_spec duplicates_policy{
    "duplicates", "what happens to a block that fills under a chain already registered", duplicates};
inline constexpr policy_spec free_order_policy{"free_order", "which block no table holds an append takes first",
                                               free_order};

}  // namespace kvconform::prefix_vocabulary
