// Mutant hybrid-prefill-late-window (docs/mutants.md): every query of a prefill reads the sliding window the chunk's
// last step leaves, so its early queries miss the rows the chunk passed.
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct prefill_late_window_rules : hybrid_rules {
  static constexpr bool window_per_query = false;
};
using hybrid_prefill_late_window = basic_hybrid<prefill_late_window_rules>;

}  // namespace kvconform::mutants
