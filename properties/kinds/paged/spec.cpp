// The paged kind's vocabulary: sequences in a shared block pool, with fork and release.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, 0, "a new, empty sequence; its handle is the count of create and fork ops before it"},
    {op_kind::fork, field_seq, "a new sequence sharing every block of seq"},
    {op_kind::release, field_seq, "seq's blocks go back to the pool unless another table holds them"},
    {op_kind::append, field_k | field_v | field_seq,
     "k and v 1-D or 2-D onto seq; refused (changing nothing) when the pool lacks blocks"},
    {op_kind::decode, field_q | field_seq, "q 1-D of width d_k over seq's rows"},
};
constexpr config_field config[] = {
    {"capacity", &cache_config::capacity, nullptr, "num_blocks: blocks in the pool"},
    {"block_size", &cache_config::block_size, nullptr, "rows per block"},
    {"d_k", &cache_config::d_k, nullptr, "key width"},
    {"d_v", &cache_config::d_v, nullptr, "value width"},
    {"preempt", nullptr, &cache_config::preempt,
     "an append that does not fit releases the newest other sequences instead of being refused"},
};
}  // namespace

extern const kind_spec paged_spec = {
    .kind = cache_kind::paged,
    .name = "paged",
    .summary = "block pool shared by sequences: fork by reference, copy-on-write, optional preemption",
    .ops = ops,
    .config = config,
    .cells = [](const cache_config& c) { return double(c.capacity) * double(c.block_size) * double(c.d_k + c.d_v); },
};

}  // namespace kvconform::kinds
