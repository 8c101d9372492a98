// Mutant latent-scores-without-rotary (docs/mutants.md): the scores leave out q_r . k_r.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::mutants {

struct no_rotary_scores_rules : latent_rules {
  static constexpr bool rotary_scores = false;
};
using latent_scores_without_rotary = basic_latent<no_rotary_scores_rules>;

}  // namespace kvconform::mutants
