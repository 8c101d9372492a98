// Mutant beam-reorder-layer0-only (docs/mutants.md): reorder gathers layer 0 only.
#pragma once

#include "impls/beam/beam.h"

namespace kvconform::mutants {

struct reorder_layer0_only_rules : beam_rules {
  static std::size_t reordered_layers(std::size_t) { return 1; }
};
using beam_reorder_layer0_only = basic_beam<reorder_layer0_only_rules>;

}  // namespace kvconform::mutants
