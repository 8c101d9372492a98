// Valid variants of the latent reference (docs/mutants.md): the other decode order the contract allows.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::variants {

/// Builds each head's keys [W_uk c ; k_r] and values W_uv c first, as the materialising MLA backends do, and declares
/// it (latent_path materialised).
struct materialised_rules : latent_rules {
  static constexpr latent_path path = latent_path::materialised;
};
using latent_materialised = basic_latent<materialised_rules>;

}  // namespace kvconform::variants
