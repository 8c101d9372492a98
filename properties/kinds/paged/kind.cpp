// The paged kind's row of the kind table.
#include "properties/kinds/kind.h"
#include "oracle/models/paged_model.h"
#include "properties/kinds/paged/kind.h"

namespace kvconform::kinds {

extern const kind_spec paged_spec;

extern const kind_descriptor paged_kind = {
    .spec = paged_spec,
    .make_model = [](const cache_config& c, const numeric_profile& p) -> std::unique_ptr<model> {
      return std::make_unique<paged_model>(c, p);
    },
    .add_properties = add_paged_properties,
    .fuzz = {.config = paged_fuzz_config, .ops = paged_fuzz_ops},
};

}  // namespace kvconform::kinds
