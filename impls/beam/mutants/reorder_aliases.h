// Mutant beam-reorder-aliases (docs/mutants.md): a repeated row shares its twin's storage after reorder.
#pragma once

#include "impls/beam/beam.h"

namespace kvconform::mutants {

struct reorder_aliases_rules : beam_rules {
  template <class Block>
  static std::shared_ptr<Block> take(const std::shared_ptr<Block>& source, bool) {
    return source;
  }
};
using beam_reorder_aliases = basic_beam<reorder_aliases_rules>;

}  // namespace kvconform::mutants
