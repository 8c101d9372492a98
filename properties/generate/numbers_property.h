// The property by which a kind's numbers are judged, for the vectors and the shape tests.
#pragma once

#include "properties/generate/property.h"

namespace kvconform {

/// The first of the kind's properties whose name says it judges within the bound: decode_within_bound, or the
/// recurrent kind's recurrent_state_within_bound; null for a kind without one.
const property* numbers_property(cache_kind k);

}  // namespace kvconform
