// The hybrid kind's vocabulary: sequences whose full, sliding, shared and cross layers share one block pool.
#include "properties/trace/block_pool_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_k | field_v | field_tokens,
     "a new sequence with the encoder's rows k (cross, d_k) and v (cross, d_v) in its cross layer (0 rows without "
     "one); with prefix_caching, holding what live sequences hold for the longest prefix of tokens every group has"},
    pool_fork,
    {op_kind::release, field_seq, "seq's blocks of every group go back to the pool unless another table holds them"},
    {op_kind::append, field_k | field_v | field_seq | field_tokens,
     "k (writing layers, n, d_k) and v (writing layers, n, d_v) onto every writing layer of seq, a token per step; "
     "refused (changing nothing) when the pool lacks blocks after the window frees its own"},
    {op_kind::decode, field_q | field_seq | field_layer | field_sinks,
     "q 1-D of width d_k over the rows layer reads of seq; sinks (1) when declared"},
    {op_kind::prefill, field_k | field_v | field_q | field_seq | field_tokens | field_sinks,
     "an append onto seq whose q (layers, n, d_k) holds each layer's query of each step: step i's attends the rows "
     "its layer reads at row before + i; the window frees its blocks after the queries read them; sinks (layers) when "
     "declared"},
};
constexpr auto sizes = sized_config("num_blocks: blocks in the pool, for every group");
constexpr config_field optional(const char* name, std::size_t cache_config::*field, const char* summary) {
  return {name, field, nullptr, summary, 0, nullptr, true};
}
constexpr config_field config[] = {
    sizes[0],
    block_size_field,
    sizes[1],
    sizes[2],
    {"layers", &cache_config::layers, nullptr, "decoder layers (writing and shared)"},
    optional("window", &cache_config::window, "the sliding window W of sliding layers (sinks included); 0: none"),
    optional("keep", &cache_config::keep, "attention sinks of sliding layers (keep < window)"),
    optional("global_every", &cache_config::global_every,
             "with a window: layer i keeps every row when (i + 1) % global_every == 0; 0: every layer slides"),
    optional("shared", &cache_config::shared, "the last shared decoder layers read an earlier layer's rows"),
    optional("cross", &cache_config::cross, "encoder rows of a cross-attention layer after the decoder's; 0: none"),
    {"prefix_caching", nullptr, &cache_config::prefix_caching,
     "a create reuses the blocks live sequences hold for the longest prefix of its tokens every writing group has "
     "(needs the capability prefix)"},
    k_scale_field,
    v_scale_field,
};
std::string check(const cache_config& c) {
  if (c.shared >= c.layers) return "shared must be less than layers: one decoder layer at least writes";
  if (c.window == 0 && (c.keep > 0 || c.global_every > 0)) return "keep and global_every need a window";
  if (c.window > 0 && c.keep >= c.window) return "keep must be less than the window";
  return "";
}
/// The pool holds block_size positions of its widest group's layers per block.
double cells(const cache_config& c) { return pool_cells(c) * double(c.layers); }

// The window counts the query's own row: the query at row p reads rows p - W + 1 .. p after the sinks. Engines differ
// in the row they measure it for (docs/kinds/hybrid.md "Policies").
constexpr policy_choice sliding_free[] = {
    {"at_append",
     "the window is measured at the last row an append writes: the blocks it passes leave the table in that append, "
     "and a prefix hit holds the W rows the window at its length reads"},
    {"next_step",
     "the window is measured at the row the next step writes: an append gives back the blocks that row no longer "
     "reads before it takes any (so it holds the chunk's peak), and a prefix hit holds the W - 1 rows the next token "
     "reads",
     "vLLM v1 (SlidingWindowManager.remove_skipped_blocks at the step's start; find_longest_cache_hit needs "
     "cdiv(W - 1, block_size) blocks)"},
};
constexpr policy_choice refused_append[] = {
    {"unchanged", "a refused append changes nothing"},
    {"frees_passed",
     "a refused append still gives back the sliding blocks the window at its first new row no longer reads",
     "vLLM v1 (allocate_slots frees skipped blocks before it checks the free count, on purpose)"},
};
constexpr policy_spec policies[] = {
    {"sliding_free", "when the sliding group gives back the blocks its window has passed", sliding_free},
    {"refused_append", "what a refused append still does", refused_append},
};
}  // namespace

extern const kind_spec hybrid_spec = {
    cache_kind::hybrid,
    "hybrid",
    "full, sliding, shared and cross-attention layers of sequences over one block pool (vLLM's hybrid allocator)",
    ops,
    config,
    check,
    cells,
    0x1p24,
    policies};

}  // namespace kvconform::kinds
