// The kind-table row of a block-pool kind (paged, prefix): the family's lengthening around the kind's own parts.
#pragma once

#include <vector>

#include "properties/generate/lengthen.h"
#include "properties/executor/kind_table.h"

namespace kvconform {

/// The row of a block-pool kind whose model is a `Model` (a block_pool_model): the targeted
/// numeric search lengthens its traces with pool_lengthen; the rest is the kind's.
template <class Model>
kind_descriptor block_pool_kind(const kind_spec& spec, void (*add_properties)(std::vector<property>&),
                                fuzz_strategy fuzz, coverage_spec coverage) {
  return {spec, model_of<Model>, add_properties, fuzz, coverage, pool_lengthen};
}

}  // namespace kvconform
