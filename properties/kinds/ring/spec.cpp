// The ring kind's vocabulary: a sliding window with append and decode.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr auto config = sized_config("the window W: the last W steps are kept");
}  // namespace

extern const kind_spec ring_spec = {
    cache_kind::ring,
    "ring",
    "sliding window: holds the last W steps, oldest first; appends are never refused for room",
    rows_ops,
    config,
    nullptr,
    rows_cells};

}  // namespace kvconform::kinds
