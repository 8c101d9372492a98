// Mutant beam-truncate-stale-length (docs/mutants.md): a truncating update keeps the old length.
#pragma once

#include <algorithm>

#include "impls/beam/beam.h"

namespace kvconform::mutants {

struct truncate_stale_length_rules : beam_rules {
  static std::size_t length_after(std::size_t length, std::size_t start, std::size_t n) {
    return std::max(length, start + n);
  }
};
using beam_truncate_stale_length = basic_beam<truncate_stale_length_rules>;

}  // namespace kvconform::mutants
