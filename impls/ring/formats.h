// The ring reference in a declared storage format (docs/numerics.md §6).
#pragma once

#include "impls/ring/ring.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// A ring storing keys in K and values in V by `Rules`.
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct ring_format_rules : ring_rules {
  using storage = storage_policy<K, V, Rules>;
};
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct ring_stored : basic_ring<ring_format_rules<K, V, Rules>> {
  using basic_ring<ring_format_rules<K, V, Rules>>::basic_ring;
  static constexpr numeric_profile profile{.keys = K, .values = V};
};

}  // namespace kvconform
