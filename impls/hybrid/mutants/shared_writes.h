// Mutant hybrid-shared-layer-writes (docs/mutants.md): a shared layer writes its own rows into its producer's slots
// (vllm-ascend #11791).
#pragma once

#include "impls/hybrid/hybrid.h"

namespace kvconform::mutants {

struct shared_writes_rules : hybrid_rules {
  static constexpr bool shared_writes = true;
};
using hybrid_shared_writes = basic_hybrid<shared_writes_rules>;

}  // namespace kvconform::mutants
