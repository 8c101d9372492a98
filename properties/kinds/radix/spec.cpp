// The radix kind's vocabulary: prefix's tree of pages with two-phase admission (lookup, admit), retract and abort.
#include "properties/trace/block_pool_spec.h"
#include "properties/trace/prefix_vocabulary.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_tokens,
     "a new running sequence holding the cached pages of the longest cached prefix of tokens: a lookup and an admit "
     "of no rows at once"},
    pool_fork,
    prefix_vocabulary::release,
    prefix_vocabulary::append,
    pool_decode,
    prefix_vocabulary::prefill,
    pool_rollback,
    {op_kind::lookup, field_tokens, prefix_vocabulary::lookup_meaning},
    prefix_vocabulary::admit,
    prefix_vocabulary::retract,
    prefix_vocabulary::abort,
};
constexpr auto sizes = sized_config("num_blocks: pages in the pool");
constexpr config_field config[] = {sizes[0], block_size_field, sizes[1], sizes[2], sizes[3], sizes[4]};
constexpr policy_spec policies[] = {prefix_vocabulary::hit_limit_policy};
}  // namespace

extern const kind_spec radix_spec = block_pool_spec(
    cache_kind::radix, "radix",
    "SGLang's radix cache as a scheduler drives it: pages found by their tokens, a lookup apart from the admit that "
    "locks its path, chunks inserted after their writes, retract and abort between them",
    ops, config, policies);

}  // namespace kvconform::kinds
