// The ring kind's vocabulary: a sliding window with append and decode.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::append, field_k | field_v,
     "k and v 1-D (one step) or 2-D (n steps); never refused for room: the oldest rows go"},
    {op_kind::decode, field_q, "q 1-D of width d_k over the held rows"},
};
constexpr config_field config[] = {
    {"capacity", &cache_config::capacity, nullptr, "the window W: the last W steps are kept"},
    {"d_k", &cache_config::d_k, nullptr, "key width"},
    {"d_v", &cache_config::d_v, nullptr, "value width"},
};
}  // namespace

extern const kind_spec ring_spec = {
    .kind = cache_kind::ring,
    .name = "ring",
    .summary = "sliding window: holds the last W steps, oldest first",
    .ops = ops,
    .config = config,
    .cells = [](const cache_config& c) { return double(c.capacity) * double(c.d_k + c.d_v); },
};

}  // namespace kvconform::kinds
