// The flat reference in a declared storage format: the same cache with another storage policy (docs/numerics.md §6).
#pragma once

#include "impls/flat/flat.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// A flat cache storing keys in K and values in V by `Rules` (a mutant or variant replaces one rule).
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct flat_format_rules : flat_rules {
  using storage = storage_policy<K, V, Rules>;
};
template <storage_format K, storage_format V = K, class Rules = storage_rules>
struct flat_stored : basic_flat<flat_format_rules<K, V, Rules>> {
  using basic_flat<flat_format_rules<K, V, Rules>>::basic_flat;
  static constexpr numeric_profile profile{.keys = K, .values = V};
};

/// The KIVI-style formats of the references: int4 keys per channel in groups of 4 tokens, int4
/// values per token in groups of 8 along d, both asymmetric with fp16 scales and an fp16 residual
/// of 8 tokens. Small groups and residual, so that the quick profile's short traces fill them.
inline constexpr storage_format kivi_keys = formats::kivi_keys(4, 8), kivi_values = formats::kivi_values(8, 8);

}  // namespace kvconform
