// Mutant hybrid-reused-block-stale-layout (docs/mutants.md): a block another group took is read with the page layout
// of the group that took it first, as vLLM #47574's fp8 group read a sliding group's freed blocks back as NaN.
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct stale_layout_rules : hybrid_rules {
  static constexpr bool relayout_on_take = false;
};
using hybrid_stale_layout = basic_hybrid<stale_layout_rules>;

}  // namespace kvconform::mutants
