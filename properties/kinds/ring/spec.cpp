// The ring kind's vocabulary: a sliding window with append and decode, and optional attention sinks.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr auto sizes = sized_config("the window W: the last W steps are kept (with the sinks, W in all)");
constexpr config_field config[] = {
    sizes[0],
    sizes[1],
    sizes[2],
    {"keep", &cache_config::keep, nullptr, "attention sinks: the first keep steps are never evicted (keep < W)", 0,
     nullptr, true},
    {"reserve", &cache_config::reserve, nullptr,
     "rows held beyond the window (W + reserve in all), so that a rollback of up to reserve steps restores it", 0,
     nullptr, true},
    sizes[3],
    sizes[4],
};
std::string check(const cache_config& c) { return c.keep < c.capacity ? "" : "keep must be less than the window"; }

constexpr policy_choice rollback_choices[] = {
    {"within_reserve",
     "accepted while every row the window at the earlier step reads is still held: from a full window, by at most "
     "the reserve",
     "llama.cpp's SWA cache (its cells beyond the window), transformers' sliding caches with a margin"},
    {"before_full",
     "accepted only while the cache holds fewer than W steps; once it has held W, every rollback is refused",
     "mlx-lm's RotatingKVCache (is_trimmable: offset < max_size)"},
};
constexpr policy_spec policies[] = {
    {"rollback", "which rollbacks a window accepts (docs/kinds/ring.md)", rollback_choices},
};
}  // namespace

extern const kind_spec ring_spec = {
    cache_kind::ring,
    "ring",
    "sliding window: holds the last W steps (after keep sinks), oldest first; appends are never refused for room",
    attending_rows_ops,
    config,
    check,
    [](const cache_config& c) { return double(c.capacity + c.reserve) * double(c.d_k + c.d_v); },
    0x1p24,
    policies};

}  // namespace kvconform::kinds
