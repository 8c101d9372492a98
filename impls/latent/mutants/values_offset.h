// Mutant latent-values-past-rotary (docs/mutants.md): value rows read from an offset that takes in the rotary part.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct values_past_rotary_rules : latent_rules {
  static std::size_t value_offset(std::size_t d_k, std::size_t d_v) { return d_k - d_v; }  // d_r, not 0
};
using latent_values_past_rotary = basic_latent<values_past_rotary_rules>;

}  // namespace kvconform::mutants
