// The built-in tiered references: double, and fp8 through every tier (docs/kinds/tiered.md).
#include "impls/tiered/tiered.h"
#include "properties/kinds/tiered/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> tiered_references() {
  return {
      reference<tiered>("tiered", "prefix caching with host and disk tiers, transfers copied at completion; double"),
      reference<tiered_stored<formats::e4m3_scaled>>(
          "tiered-e4m3", "tiered, vLLM-style fp8 e4m3 with per-tensor scales, stored, moved and loaded as stored"),
  };
}

}  // namespace kvconform::kinds
