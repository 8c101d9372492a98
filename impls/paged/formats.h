// The paged reference in a declared storage format (docs/numerics.md §6).
#pragma once

#include "impls/paged/paged.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// A paged cache storing keys in K and values in V by `Rules`.
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct paged_format_rules : paged_rules {
  using storage = storage_policy<K, V, Rules>;
};
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct paged_stored : basic_paged<paged_format_rules<K, V, Rules>> {
  using basic_paged<paged_format_rules<K, V, Rules>>::basic_paged;
  static constexpr numeric_profile profile{.keys = K, .values = V};
};

}  // namespace kvconform
