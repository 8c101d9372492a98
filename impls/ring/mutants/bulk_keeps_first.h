// Mutant ring-bulk-keeps-first (docs/mutants.md): an append of n > W rows keeps the first W, not the last.
#pragma once

#include <algorithm>

#include "impls/ring/ring.h"

namespace kvconform::mutants {

struct bulk_keeps_first_rules : ring_rules {
  static std::pair<std::size_t, std::size_t> kept(std::size_t n, std::size_t window) {
    return {0, std::min(n, window)};
  }
};
using ring_bulk_keeps_first = basic_ring<bulk_keeps_first_rules>;

}  // namespace kvconform::mutants
