// Mutant latent-absorbed-wrong-head (docs/mutants.md): the absorbed query of head h folded with the next head's W_uk.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct wrong_head_rules : latent_rules {
  static std::size_t absorbing_head(std::size_t h, std::size_t heads) { return (h + 1) % heads; }
};
using latent_absorbed_wrong_head = basic_latent<wrong_head_rules>;

}  // namespace kvconform::mutants
