// Mutant ring-head-off-by-one (docs/mutants.md): the read start is off by one once the ring has wrapped.
#pragma once

#include "impls/ring/ring.h"

namespace kvconform::mutants {

struct head_off_by_one_rules : ring_rules {
  static std::size_t oldest_slot(std::int64_t total, std::size_t len, std::size_t window) {
    const bool wrapped = total > static_cast<std::int64_t>(window);
    return (ring_rules::oldest_slot(total, len, window) + (wrapped ? 1 : 0)) % window;
  }
};
using ring_head_off_by_one = basic_ring<head_off_by_one_rules>;

}  // namespace kvconform::mutants
