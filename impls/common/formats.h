// A reference in a declared storage format: the same cache with another storage policy (docs/numerics.md §6).
#pragma once

#include "impls/common/row_storage.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// A reference's rules `KindRules` with keys stored in K and values in V by `Rules`.
template <class KindRules, storage_format K, storage_format V, class Rules>
struct format_rules : KindRules {
  using storage = storage_policy<K, V, Rules>;
};

/// The reference `Cache` (a basic_KIND template over its rules, whose default rules are `KindRules`)
/// storing keys in K and values in V by `Rules` (a mutant or variant replaces one rule), and
/// declaring them as its numeric profile. Each reference names it KIND_stored.
template <template <class> class Cache, class KindRules, storage_format K, storage_format V = K,
          class Rules = storage_rules>
struct stored : Cache<format_rules<KindRules, K, V, Rules>> {
  using base = Cache<format_rules<KindRules, K, V, Rules>>;
  using base::base;
  static constexpr numeric_profile profile{.keys = K, .values = V};
};

/// The KIVI-style formats of the references: int4 keys per channel in groups of 4 tokens, int4
/// values per token in groups of 8 along d, both asymmetric with fp16 scales and an fp16 residual
/// of 8 tokens. Small groups and residual, so that the quick profile's short traces fill them.
inline constexpr storage_format kivi_keys = formats::kivi_keys(4, 8), kivi_values = formats::kivi_values(8, 8);

}  // namespace kvconform
