// Mutant latent-scale-of-latent-width (docs/mutants.md): the absorbed softmax scaled by the width it dots over.
#pragma once

#include <cmath>

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct latent_width_scale_rules : latent_rules {
  static double scale(std::size_t /*d_nope*/, std::size_t d_r, std::size_t d_c) {
    return 1 / std::sqrt(static_cast<double>(d_c + d_r));  // the latent row's width, not the head's
  }
};
using latent_scale_of_latent_width = basic_latent<latent_width_scale_rules>;

}  // namespace kvconform::mutants
