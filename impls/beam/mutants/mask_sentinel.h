// Mutant beam-mask-sentinel (docs/mutants.md): masked positions get a finite -5e4 score instead of no weight.
#pragma once

#include "impls/beam/beam.h"

namespace kvconform::mutants {

struct mask_sentinel_rules : beam_rules {
  struct kernel : attention_kernel {
    static constexpr bool exclude_masked = false;
    static constexpr double masked_score = -5e4;
  };
};
using beam_mask_sentinel = basic_beam<mask_sentinel_rules>;

}  // namespace kvconform::mutants
