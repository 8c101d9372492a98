// The prefix kind's vocabulary: sequences in a block pool whose full blocks are found again by their tokens.
#include "properties/trace/block_pool_spec.h"
#include "properties/trace/prefix_vocabulary.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_tokens | field_extra_key,
     "a new sequence holding the cached full blocks of the longest cached prefix of tokens under its extra_key (hits "
     "need no block)"},
    pool_fork,
    prefix_vocabulary::release,
    prefix_vocabulary::append,
    pool_decode,
    prefix_vocabulary::prefill,
    pool_rollback,
    {op_kind::lookup, field_tokens | field_extra_key, prefix_vocabulary::lookup_meaning},
    prefix_vocabulary::admit,
    prefix_vocabulary::retract,
    prefix_vocabulary::abort,
};
constexpr auto sizes = sized_config("num_blocks: blocks in the pool");
constexpr config_field config[] = {sizes[0], block_size_field, sizes[1], sizes[2], sizes[3], sizes[4]};

using namespace prefix_vocabulary;
constexpr policy_spec policies[] = {
    hit_limit_policy,
    duplicates_policy,
    {"eviction", "what an append evicts when free blocks run out", eviction},
    free_order_policy,
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
