// The prefix kind's vocabulary: sequences in a block pool whose full blocks are found again by their tokens.
#include "properties/trace/block_pool_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_tokens | field_extra_key,
     "a new sequence holding the cached full blocks of the longest cached prefix of tokens under its extra_key (hits "
     "need no block)"},
    pool_fork,
    {op_kind::release, field_seq,
     "seq's registered blocks stay cached and evictable (last block first); others go free"},
    {op_kind::append, field_k | field_v | field_seq | field_tokens,
     "k and v 1-D or 2-D onto seq with one token per step; free blocks first, then the least recently released "
     "evictable ones; refused (changing nothing) when both together do not suffice"},
    pool_decode,
    {op_kind::prefill, field_k | field_v | field_q | field_seq | field_tokens,
     "an append onto seq with one token per step whose q 2-D (m, d_k) attends causally, step i's query over the "
     "rows up to its own"},
    pool_rollback,
};
constexpr auto sizes = sized_config("num_blocks: blocks in the pool");
constexpr config_field config[] = {sizes[0], block_size_field, sizes[1], sizes[2], sizes[3], sizes[4]};

// The points where engines legitimately differ (docs/kinds/prefix.md "Policies"), each default first.
constexpr policy_choice hit_limit[] = {
    {"all", "a create finds the longest registered prefix of all its tokens"},
    {"all_but_last", "of all its tokens but the last, which is computed again for its logits",
     "vLLM v1 (get_computed_blocks: max_cache_hit_length = num_tokens - 1), SGLang (Req._compute_max_prefix_len)"},
    {"all_but_last_block", "of all its tokens but the last, less the last block it matches, computed again too",
     "vLLM v1 with EAGLE drafts (FullAttentionManager.find_longest_cache_hit drops the last matched block)"},
};
constexpr policy_choice duplicates[] = {
    {"first", "a block that fills under a chain already registered is not registered: the first block stays the entry"},
    {"registered",
     "every block that fills is registered; a create finds the earliest registered block of a chain still cached, and "
     "a released duplicate is evictable",
     "vLLM v1 (BlockHashToBlockMap, the NOTE #1 of block_pool.py, PR #9668)"},
    {"adopted", "the sequence takes the registered block in its table in place of its own, which goes free",
     "SGLang (cache_unfinished_req frees the duplicate pages and re-points req_to_token)"},
};
constexpr policy_choice eviction[] = {
    {"block", "an append evicts the least recently released evictable blocks, one block at a time"},
    {"leaf",
     "an append evicts whole leaves of the radix tree, least recently used first: the blocks one append registered, "
     "split where a create's hit, another chain or a sequence's full blocks end",
     "SGLang (RadixCache.evict, LRU by last_access_time)"},
};
constexpr policy_choice free_order[] = {
    {"uncached_first", "an append takes blocks that were never registered before evictable ones",
     "vLLM v1 since PR #42656, SGLang"},
    {"one_queue",
     "every block no table holds waits in one queue in release order; an append takes the oldest, evicting it when it "
     "is registered, even while never-registered blocks wait behind it",
     "vLLM v1 before PR #42656"},
};
constexpr policy_spec policies[] = {
    {"hit_limit", "how much of a create's tokens its hit may cover", hit_limit},
    {"duplicates", "what happens to a block that fills under a chain already registered", duplicates},
    {"eviction", "what an append evicts when free blocks run out", eviction},
    {"free_order", "which block no table holds an append takes first", free_order},
    rollback_blocks_policy,
};

/// Leaves are the radix tree's: a tree of one block per chain (adopted), evicted apart from the free blocks.
std::string rules(const policy_set& p) {
  if (p.is("eviction", "leaf") && !p.is("duplicates", "adopted"))
    return "prefix policy eviction=leaf needs duplicates=adopted (a radix tree holds one block per chain)";
  if (p.is("eviction", "leaf") && p.is("free_order", "one_queue"))
    return "prefix policy eviction=leaf evicts tree leaves before taking free blocks: it needs "
           "free_order=uncached_first";
  return "";
}
}  // namespace

extern const kind_spec prefix_spec = block_pool_spec(
    cache_kind::prefix, "prefix",
    "automatic prefix caching: full blocks found by the hash chain of their tokens, kept after release, evicted LRU",
    ops, config, policies, rules);

}  // namespace kvconform::kinds
