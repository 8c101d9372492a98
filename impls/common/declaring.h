// A cache type declaring policies (docs/design.md §2.4): the policy variants and their mutants of the references.
#pragma once

#include "properties/trace/policy.h"

namespace kvconform {

/// Cache with the policies `Declared` (an array of kvconform::policy) declared, whatever it does: a reference of
/// other rules declaring what it does is a variant; one declaring what it does not is a mutant.
template <class Cache, const auto& Declared>
struct declaring : Cache {
  using Cache::Cache;
  static constexpr const auto& policies = Declared;
};

}  // namespace kvconform
