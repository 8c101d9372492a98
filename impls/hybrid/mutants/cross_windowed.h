// Mutant hybrid-cross-layer-windowed (docs/mutants.md): the cross-attention layer inherits the decoder's sliding
// window and reads only the last encoder rows (transformers #46111).
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct cross_windowed_rules : hybrid_rules {
  static bool windowed(hybrid_group g) { return g != hybrid_group::full; }
};
using hybrid_cross_windowed = basic_hybrid<cross_windowed_rules>;

}  // namespace kvconform::mutants
