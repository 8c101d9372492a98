// Mutant latent-e4m3-values-unscaled (docs/mutants.md): the fp8 scale applied to the keys but not to the values
// read from the same rows.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct values_unscaled_rules : latent_rules {
  static double value_factor(double k_scale) { return 1 / k_scale; }  // back to the stored codes
};
using latent_e4m3_values_unscaled = latent_stored<formats::e4m3_scaled, storage_rules, values_unscaled_rules>;

}  // namespace kvconform::mutants
