// Mutant hybrid-prefix-hit-full-group-only (docs/mutants.md): a prefix hit as long as the full group's, whether or
// not the sliding group holds the blocks its window reads at that length (vLLM #50457).
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct hit_full_group_only_rules : hybrid_rules {
  static constexpr bool hit_full_group_only = true;
};
using hybrid_hit_full_group_only = basic_hybrid<hit_full_group_only_rules>;

}  // namespace kvconform::mutants
