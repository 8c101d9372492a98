// Mutant beam-bf16-truncate (docs/mutants.md): bf16 by cutting the low half of the float bits instead of rounding.
#pragma once

#include <bit>
#include <cstdint>

#include "impls/beam/beam.h"

namespace kvconform::mutants {

struct bf16_truncate_rules : storage_rules {
  static double store(const storage_format& f, double x) {
    if (f.element != element_format::bf16) return storage_rules::store(f, x);
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(x)) & 0xffff0000u);
  }
};
using beam_bf16_truncate = beam_stored<formats::bf16, formats::bf16, bf16_truncate_rules>;

}  // namespace kvconform::mutants
