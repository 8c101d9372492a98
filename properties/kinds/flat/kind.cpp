// The flat kind's row of the kind table.
#include "properties/kinds/flat/kind.h"
#include "properties/generate/rows_generators.h"
#include "properties/kinds/kind.h"

namespace kvconform::kinds {

extern const kind_spec flat_spec;

extern const kind_descriptor flat_kind = {
    .spec = flat_spec,
    .make_model = [](const cache_config& c, const numeric_profile& p) -> std::unique_ptr<model> {
      return std::make_unique<rows_model>(c, p, rows_model::full::refuse);
    },
    .add_properties = add_flat_properties,
    .fuzz = {.config = rows_fuzz_config,
             .ops = [](byte_io& io, const cache_config& c) { return rows_fuzz_ops(io, c, rows_model::full::refuse); }},
};

}  // namespace kvconform::kinds
