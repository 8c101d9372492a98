// The paged kind's vocabulary: sequences in a shared block pool, with fork and release.
#include "properties/trace/block_pool_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    pool_create,
    pool_fork,
    pool_release,
    {op_kind::append, field_k | field_v | field_seq,
     "k and v 1-D or 2-D onto seq; refused (changing nothing) when the pool lacks blocks"},
    {op_kind::decode, field_q | field_seq | field_sinks,
     "q 1-D of width d_k over seq's rows; sinks (1) when the profile declares learned sinks"},
    {op_kind::prefill, field_k | field_v | field_q | field_seq | field_sinks,
     "an append onto seq whose q 2-D (m, d_k) attends causally, step i's query over the rows up to its own; sinks "
     "(1) when declared"},
    pool_rollback,
};
constexpr auto sizes = sized_config("num_blocks: blocks in the pool");
constexpr config_field config[] = {
    sizes[0],
    block_size_field,
    sizes[1],
    sizes[2],
    {"preempt", nullptr, &cache_config::preempt,
     "an append that does not fit releases the newest other sequences instead of being refused"},
    k_scale_field,
    v_scale_field,
};
constexpr policy_spec policies[] = {rollback_blocks_policy};
}  // namespace

extern const kind_spec paged_spec = block_pool_spec(
    cache_kind::paged, "paged", "block pool shared by sequences: fork by reference, copy-on-write, optional preemption",
    ops, config, policies);

}  // namespace kvconform::kinds
