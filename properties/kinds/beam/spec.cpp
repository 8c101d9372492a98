// The beam kind's vocabulary: layers x batch x kv heads, with update, reorder, masked decode and prefill.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::update, field_k | field_v | field_layer | field_start,
     "k and v (B, H, n, D) written at positions [start, start + n) of layer; start below the length truncates first"},
    {op_kind::reorder, field_index, "row b of every layer becomes old row index[b] (B indices, repeats allowed)"},
    {op_kind::decode, field_q | field_layer | field_mask, "q (B, Hq, D) over layer; mask (B, len): 0 takes no weight"},
    {op_kind::prefill, field_k | field_v | field_q | field_layer | field_mask,
     "k and v (B, H, m, D) appended at the layer's length; query i of q (B, Hq, m, D) attends causally, up to its own "
     "position; mask (B, len + m): 0 takes no weight"},
};
constexpr auto sizes = sized_config("max_len T: positions per layer");
constexpr config_field config[] = {
    sizes[0],
    {"d_k", &cache_config::d_k, nullptr, "head_dim D (keys)"},
    {"d_v", &cache_config::d_v, nullptr, "head_dim D (values; equal to d_k)"},
    {"layers", &cache_config::layers, nullptr, "L"},
    {"batch", &cache_config::batch, nullptr, "B: rows (sequences or beams)"},
    {"heads", &cache_config::heads, nullptr, "H: kv heads"},
    {"q_heads", &cache_config::q_heads, nullptr, "Hq: query heads, a multiple of H (grouped-query attention)"},
    k_scale_field,
    v_scale_field,
};
std::string check(const cache_config& c) {
  if (c.d_k != c.d_v) return "a beam cache has one head_dim: d_k must equal d_v";
  if (c.q_heads % c.heads != 0) return "q_heads must be a multiple of heads";
  return "";
}
double cells(const cache_config& c) { return rows_cells(c) * double(c.layers) * double(c.batch) * double(c.heads); }
}  // namespace

extern const kind_spec beam_spec = {
    cache_kind::beam, "beam",
    "layers x batch x kv heads with prefill, rollback, reorder, grouped-query attention and masks", ops, config, check,
    cells,
    // The long cases exceed 2^24 elements, keys and values each (docs/design.md §4.4); the reference reserves
    // them and touches only the positions written.
    0x1p26};

}  // namespace kvconform::kinds
