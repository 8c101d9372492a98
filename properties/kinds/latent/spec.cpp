// The latent kind's vocabulary: sequences of latent rows in a shared block pool, decoded through each head's
// up-projections.
#include "properties/trace/block_pool_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    pool_create,
    pool_fork,
    pool_release,
    {op_kind::append, field_k | field_seq,
     "k 1-D or 2-D rows [c ; k_r] of width d_k onto seq (no v: the values are each row's first d_v entries); "
     "refused (changing nothing) when the pool lacks blocks"},
    {op_kind::decode, field_q | field_seq | field_w_uk | field_w_uv,
     "q (Hq, d_nope + d_r) with each head's w_uk (Hq, d_nope, d_v) and w_uv (Hq, d_vh, d_v) over seq's rows: "
     "output (Hq, d_vh), weights (Hq, rows)"},
    {op_kind::prefill, field_k | field_q | field_seq | field_w_uk | field_w_uv,
     "k (m, d_k) appended as append does, with q (m, Hq, d_nope + d_r) and the decode's w_uk and w_uv: step i's "
     "heads attend over seq's rows up to its own; output (m, Hq, d_vh), weights (m, Hq, rows)"},
    pool_rollback,
};
constexpr config_field config[] = {
    {"capacity", &cache_config::capacity, nullptr, "num_blocks: blocks in the pool"},
    block_size_field,
    {"d_k", &cache_config::d_k, nullptr, "row width d_c + d_r: the latent c and the rotary key part k_r"},
    {"d_v", &cache_config::d_v, nullptr, "latent width d_c: the first d_c entries of a row are its value row"},
    {"k_scale", nullptr, nullptr, "per-tensor scale of a scaled element format, for the rows (keys and values alike)",
     1, &cache_config::k_scale},
};
std::string check(const cache_config& c) {
  return c.d_v < c.d_k ? "" : "d_k (d_c + d_r) must exceed d_v (d_c): a latent row has a rotary part";
}
/// num_blocks x block_size x d_k: the rows are all a pool holds.
double cells(const cache_config& c) { return double(c.capacity) * double(c.block_size) * double(c.d_k); }
constexpr policy_spec policies[] = {rollback_blocks_policy};
}  // namespace

extern const kind_spec latent_spec{
    cache_kind::latent,
    "latent",
    "multi-head latent attention (MLA): one row per token whose first d_c entries are its value, in a block pool",
    ops,
    config,
    check,
    cells,
    0x1p24,
    policies};

}  // namespace kvconform::kinds
