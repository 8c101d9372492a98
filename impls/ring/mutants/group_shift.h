// Mutant ring-q8-group-shift (docs/mutants.md): every per-token group after the first starts one element late.
#pragma once

#include "impls/ring/ring.h"

namespace kvconform::mutants {

struct group_shift_rules : storage_rules {
  static std::size_t group_first(std::size_t g, std::size_t size) { return g == 0 ? 0 : g * size + 1; }
};
using ring_q8_group_shift = ring_stored<formats::q8_0, formats::q8_0, group_shift_rules>;

}  // namespace kvconform::mutants
