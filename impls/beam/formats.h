// The beam reference in a declared storage format (docs/numerics.md §6).
#pragma once

#include "impls/beam/beam.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// A beam cache storing keys in K and values in V by `Rules`.
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct beam_format_rules : beam_rules {
  using storage = storage_policy<K, V, Rules>;
};
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct beam_stored : basic_beam<beam_format_rules<K, V, Rules>> {
  using basic_beam<beam_format_rules<K, V, Rules>>::basic_beam;
  static constexpr numeric_profile profile{.keys = K, .values = V};
};

}  // namespace kvconform
