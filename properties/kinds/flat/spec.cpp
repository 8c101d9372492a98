// The flat kind's vocabulary: a fixed-capacity cache with append and decode.
#include "properties/trace/kind_spec.h"

namespace kvconform::kinds {

namespace {
constexpr auto config = sized_config("max_len: the most steps the cache holds");
}  // namespace

extern const kind_spec flat_spec = {cache_kind::flat, "flat", "fixed capacity: an append beyond max_len is refused",
                                    flat_ops,         config, nullptr,
                                    rows_cells};

}  // namespace kvconform::kinds
