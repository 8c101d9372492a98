// The model factory: one model class per kind family.
#include "oracle/model.h"

#include <stdexcept>

#include "oracle/beam_model.h"
#include "oracle/rows_model.h"

namespace kvconform {

std::unique_ptr<model> make_model(const cache_config& c, const numeric_profile& p) {
  switch (c.kind) {
    case cache_kind::flat:
    case cache_kind::ring: return std::make_unique<rows_model>(c, p);
    case cache_kind::beam: return std::make_unique<beam_model>(c, p);
    default: throw std::invalid_argument(std::string("no model for kind ") + to_string(c.kind));
  }
}

}  // namespace kvconform
