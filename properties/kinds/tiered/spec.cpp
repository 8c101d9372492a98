// The tiered kind's vocabulary: prefix's pool with host and disk tiers and the transfers between them.
#include "properties/trace/block_pool_spec.h"
#include "properties/trace/prefix_vocabulary.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_tokens,
     "a new sequence holding the cached full blocks of the longest cached prefix of tokens (its prompt, which loads "
     "continue)"},
    pool_fork,
    prefix_vocabulary::release,
    prefix_vocabulary::append,
    pool_decode,
    prefix_vocabulary::prefill,
    pool_rollback,
    {op_kind::store, field_seq | field_block | field_tier,
     "begins a copy of seq's tier block `block` (written rows only) to tier 1 (from its device blocks, which the "
     "transfer holds) or 2 (from the host entry, pinned); a chain the tier has already is accepted and copies nothing"},
    {op_kind::load, field_seq | field_tier,
     "begins a copy of the tier blocks that continue seq's prompt from its rows: from tier 1 into device blocks past "
     "its rows (taken now), or from tier 2 into pending host entries; seq refuses other ops until it ends"},
    {op_kind::complete, field_transfer, "the pending transfer's copy is done: its destination holds the rows"},
    {op_kind::fail, field_transfer,
     "the pending transfer failed: its destination is dropped; a load's sequence recomputes (or is released)"},
    {op_kind::evict, field_tier | field_count,
     "evicts the count least recently used evictable blocks (tier 0) or ready, unpinned entries (tiers 1, 2)"},
    {op_kind::put, field_tier | field_tokens | field_k | field_v,
     "stores tokens' rows (whole tier blocks) in tier 1 or 2 at once, as a producer outside this cache would"},
};
constexpr auto sizes = sized_config("num_blocks: blocks in the device pool");
constexpr config_field config[] = {
    sizes[0],
    block_size_field,
    sizes[1],
    sizes[2],
    {"host_blocks", &cache_config::host_blocks, nullptr, "tier blocks the host tier holds"},
    {"host_factor", &cache_config::host_factor, nullptr, "device blocks per tier block (host and disk)"},
    {"disk_blocks", &cache_config::disk_blocks, nullptr, "tier blocks the disk tier holds; 0: no disk tier", 0, nullptr,
     true},
    sizes[3],
    sizes[4],
};

constexpr policy_choice completion_order[] = {
    {"any", "any pending transfer may complete"},
    {"fifo",
     "a transfer completes only after every earlier one of its direction (device to host, host to disk, host to "
     "device, disk to host); another is refused `order`",
     "vLLM's offloading connector (one stream per direction, get_finished pops from the head)"},
};
constexpr policy_choice load_failure[] = {
    {"recompute", "a failed load leaves its sequence as it was before the load, to compute the rest"},
    {"abort", "a failed load releases its sequence", "vLLM kv_load_failure_policy=fail (the default since PR #34896)"},
};
constexpr policy_choice host_eviction[] = {
    {"any", "any ready, unpinned host entry may be evicted"},
    {"device_absent", "only those whose last device block's chain is no longer registered on the device",
     "SGLang HiCache (evict_host skips nodes not yet evicted from the device)"},
};
constexpr policy_spec policies[] = {
    prefix_vocabulary::hit_limit_policy,
    prefix_vocabulary::duplicates_policy,
    prefix_vocabulary::free_order_policy,
    {"completion_order", "which pending transfer may complete", completion_order},
    {"load_failure", "what a failed load does to its sequence", load_failure},
    {"host_eviction", "which host entries eviction may take", host_eviction},
};

/// The device pool's cells, and the tiers' rows.
double cells(const cache_config& c) {
  return pool_cells(c) +
         double(c.host_blocks + c.disk_blocks) * double(c.host_factor) * double(c.block_size) * double(c.d_k + c.d_v);
}
}  // namespace

extern const kind_spec tiered_spec = {cache_kind::tiered,
                                      "tiered",
                                      "prefix caching with host and disk tiers: blocks stored and loaded back by "
                                      "transfers that complete or fail in any order the caller chooses",
                                      ops,
                                      config,
                                      nullptr,
                                      cells,
                                      0x1p24,
                                      policies,
                                      nullptr};

}  // namespace kvconform::kinds
