// The ring kind's row of the kind table.
#include "properties/kinds/kind.h"
#include "properties/generate/rows_generators.h"
#include "properties/kinds/ring/kind.h"

namespace kvconform::kinds {

extern const kind_spec ring_spec;

extern const kind_descriptor ring_kind = {
    .spec = ring_spec,
    .make_model = [](const cache_config& c, const numeric_profile& p) -> std::unique_ptr<model> {
      return std::make_unique<rows_model>(c, p, rows_model::full::evict);
    },
    .add_properties = add_ring_properties,
    .fuzz = {.config = rows_fuzz_config,
             .ops = [](byte_io& io, const cache_config& c) { return rows_fuzz_ops(io, c, rows_model::full::evict); }},
};

}  // namespace kvconform::kinds
