// The growing kind's vocabulary: a cache without capacity whose storage grows in declared steps.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr config_field config[] = {
    {"step", &cache_config::capacity, nullptr, "growth step: storage is reserved in whole steps of this many rows"},
    {"d_k", &cache_config::d_k, nullptr, "key width"},
    {"d_v", &cache_config::d_v, nullptr, "value width"},
    k_scale_field,
    v_scale_field,
};
}  // namespace

extern const kind_spec growing_spec = {cache_kind::growing,
                                       "growing",
                                       "no capacity: appends are never refused for room; storage grows in whole steps",
                                       rows_ops,
                                       config,
                                       nullptr,
                                       rows_cells};

}  // namespace kvconform::kinds
