// Mutant ring-head-off-by-one (docs/mutants.md): the read start is off by one once the ring has wrapped.
#pragma once

#include "impls/ring/ring.h"

namespace kvconform::mutants {

struct head_off_by_one_rules : ring_rules {
  static std::size_t read_slot(std::size_t i, std::int64_t total, std::size_t held, std::size_t keep,
                               std::size_t part) {
    const std::size_t right = ring_rules::read_slot(i, total, held, keep, part);
    return i < keep ? right : keep + (right - keep + 1) % part;
  }
};
using ring_head_off_by_one = basic_ring<head_off_by_one_rules>;

}  // namespace kvconform::mutants
