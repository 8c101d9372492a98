// The hybrid references in declared storage formats: every group alike, or the sliding group in its own.
#pragma once

#include "impls/common/formats.h"
#include "impls/hybrid/hybrid.h"

namespace kvconform {

/// The hybrid reference storing keys in K and values in V (impls/common/formats.h).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
using hybrid_stored = stored<basic_hybrid, hybrid_rules, K, V, Rules>;

/// The hybrid reference storing the full and cross groups in K and V and the sliding group in SK and SV, over the
/// hybrid rules `HybridRules` (a mutant replaces one), declaring them as its numeric profile.
template <storage_format K, storage_format V, storage_format SK, storage_format SV, class HybridRules = hybrid_rules>
struct grouped_rules : HybridRules {
  using storage = storage_policy<K, V>;
  using sliding_storage = storage_policy<SK, SV>;
};
template <storage_format K, storage_format V, storage_format SK, storage_format SV, class HybridRules = hybrid_rules>
struct hybrid_grouped : basic_hybrid<grouped_rules<K, V, SK, SV, HybridRules>> {
  using basic_hybrid<grouped_rules<K, V, SK, SV, HybridRules>>::basic_hybrid;
  static constexpr numeric_profile profile{.keys = K, .values = V, .sliding_keys = SK, .sliding_values = SV};
};

}  // namespace kvconform
