// Mutant hybrid-sink-dropped-sliding (docs/mutants.md): gpt-oss's sliding layers attend without their learned sink
// (SGLang PR #11634: the unified kernel's window + sink path was wrong).
#pragma once

#include "impls/hybrid/declared.h"

namespace kvconform::mutants {

struct sink_dropped_sliding_rules : gpt_oss_rules {
  static constexpr bool sink_in_window = false;
};
using hybrid_sink_dropped_sliding = hybrid_declared<sink_dropped_sliding_rules>;

}  // namespace kvconform::mutants
