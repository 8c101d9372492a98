// Mutant hybrid-global-layers-windowed (docs/mutants.md): the sliding window applied to full layers (vLLM #51756).
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct global_windowed_rules : hybrid_rules {
  static bool windowed(hybrid_group g) { return g != hybrid_group::cross; }
};
using hybrid_global_windowed = basic_hybrid<global_windowed_rules>;

}  // namespace kvconform::mutants
