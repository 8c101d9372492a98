// The beam kind's row of the kind table.
#include "properties/kinds/beam/kind.h"
#include "oracle/models/beam_model.h"
#include "properties/kinds/kind.h"

namespace kvconform::kinds {

extern const kind_spec beam_spec;

extern const kind_descriptor beam_kind = {
    .spec = beam_spec,
    .make_model = [](const cache_config& c, const numeric_profile& p) -> std::unique_ptr<model> {
      return std::make_unique<beam_model>(c, p);
    },
    .add_properties = add_beam_properties,
    .fuzz = {.config = beam_fuzz_config, .ops = beam_fuzz_ops},
};

}  // namespace kvconform::kinds
