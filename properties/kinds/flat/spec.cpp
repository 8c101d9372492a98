// The flat kind's vocabulary: a fixed-capacity cache with append and decode.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr op_spec ops[] = {
    {op_kind::append, field_k | field_v,
     "k and v 1-D (one step) or 2-D (n steps, n = 0 a no-op); refused when len + n > capacity"},
    {op_kind::decode, field_q, "q 1-D of width d_k over every stored row"},
};
constexpr config_field config[] = {
    {"capacity", &cache_config::capacity, nullptr, "max_len: the most steps the cache holds"},
    {"d_k", &cache_config::d_k, nullptr, "key width"},
    {"d_v", &cache_config::d_v, nullptr, "value width"},
};
}  // namespace

extern const kind_spec flat_spec = {
    .kind = cache_kind::flat,
    .name = "flat",
    .summary = "fixed capacity: appends beyond max_len are refused",
    .ops = ops,
    .config = config,
    .cells = [](const cache_config& c) { return double(c.capacity) * double(c.d_k + c.d_v); },
};

}  // namespace kvconform::kinds
