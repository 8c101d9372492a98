// The recurrent kind's vocabulary: sequences of recurrent state, rollback of the last append, checkpoints by prefix.
#include <algorithm>

#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::create, field_tokens,
     "a new sequence resumed from the longest prefix of tokens whose checkpoint and attention blocks the cache holds "
     "(empty without one); the caller appends the rest of its prompt"},
    {op_kind::fork, field_seq,
     "a new sequence with seq's state, window, tokens and droppable steps, independent of it"},
    {op_kind::release, field_seq, "ends seq; its last append is kept for good first, publishing its checkpoints"},
    {op_kind::append, field_k | field_v | field_seq | field_x | field_g | field_beta | field_tokens,
     "x 1-D (one step) or 2-D (n steps) of width 2 d_k + d_v, g and tokens n each, beta n (delta rule) or empty, k "
     "(layers, n, d_k) and v (layers, n, d_v) the attention layers' rows: keeps seq's previous append for good, then "
     "runs the steps and returns each one's output (n x d_v); n = 0 a no-op"},
    {op_kind::rollback, field_seq | field_count,
     "drops the newest count steps of seq's last append (rejected drafts); more is refused; 0 a no-op"},
    {op_kind::evict, field_count,
     "drops the count least recently used checkpoints and attention blocks (all of them, if fewer)"},
};
constexpr config_field config[] = {
    {"capacity", &cache_config::capacity, nullptr, "checkpoints and attention blocks the cache holds: one pool"},
    {"block_size", &cache_config::block_size, nullptr, "steps between checkpoints"},
    {"d_k", &cache_config::d_k, nullptr, "key width: rows of the state"},
    {"d_v", &cache_config::d_v, nullptr, "value width: columns of the state"},
    {"conv_width", &cache_config::conv_width, nullptr, "taps of the causal convolution before the recurrence"},
    {"delta", nullptr, &cache_config::delta, "the gated delta rule (Gated DeltaNet); absent: the decay (Mamba-2)"},
    {"layers", &cache_config::layers, nullptr,
     "attention layers beside the recurrent one, their rows kept per sequence and in blocks by prefix; 0: none", 0,
     nullptr, true},
};

constexpr policy_choice hit_limit[] = {
    {"all", "a create may resume from a checkpoint covering all its tokens"},
    {"all_but_last", "from one covering all but the last, which is computed again for its output",
     "vLLM v1 (max_cache_hit_length = num_tokens - 1), SGLang (Req._compute_max_prefix_len)"},
};
constexpr policy_choice checkpoint_at[] = {
    {"every_block", "a checkpoint at every block boundary an append crosses"},
    {"append_end", "only where an append (less what a rollback dropped) ends on a block boundary",
     "vLLM mamba_cache_mode=align (the state is kept only at the end of a scheduled step)"},
};
constexpr policy_spec policies[] = {
    {"hit_limit", "how much of a create's tokens its checkpoint may cover", hit_limit},
    {"checkpoint_at", "which block boundaries get a checkpoint", checkpoint_at},
};

/// A state and a window, or a block of every attention layer's rows, per entry of the pool, and one more: the live
/// sequences are bounded by the trace.
double cells(const cache_config& c) {
  const double head =
      double(c.d_k) * double(c.d_v) + double(c.conv_width ? c.conv_width - 1 : 0) * double(2 * c.d_k + c.d_v);
  const double rows = double(c.layers) * double(c.block_size) * double(c.d_k + c.d_v);
  return (double(c.capacity) + 1) * std::max(head, rows);
}
}  // namespace

extern const kind_spec recurrent_spec = {cache_kind::recurrent,
                                         "recurrent",
                                         "linear-attention and state-space layers: a recurrent state per sequence, "
                                         "rollback of rejected drafts, checkpoints at block boundaries by prefix",
                                         ops,
                                         config,
                                         nullptr,
                                         cells,
                                         0x1p24,
                                         policies,
                                         nullptr};

}  // namespace kvconform::kinds
