// Valid variants of the latent reference (docs/mutants.md): the other decode order, other integer-group scales.
#pragma once

#include "impls/latent/latent.h"

namespace kvconform::variants {

/// Builds each head's keys [W_uk c ; k_r] and values W_uv c first, as the materialising MLA backends do, and declares
/// it (latent_path materialised).
struct materialised_rules : latent_rules {
  static constexpr latent_path path = latent_path::materialised;
};
using latent_materialised = basic_latent<materialised_rules>;

/// Integer-group scales rounded up to their format where the declared rule rounds to nearest: within one rounding of
/// the rule (docs/numerics.md §6.2), so its codes, and the rows it exposes and attends, are not the model's. Passes
/// only as each decode is judged over the rows the cache exposes, every head materialised again from them.
struct scales_up_rules : storage_rules {
  static double scale(const storage_format& f, double lo, double hi) {
    const double nearest = storage_rules::scale(f, lo, hi);
    const double ideal = f.symmetric ? amax(lo, hi) / f.qmax() : (hi - lo) / f.qmax();
    // The next fp16 above `nearest` (q8_0's scales): 0.75 to 1.5 of its ulp up rounds to it.
    return nearest >= ideal ? nearest : store({.element = f.scale_format}, nearest * (1 + 0x1.8p-11));
  }
};
using latent_q8_0_scales_up = latent_stored<formats::q8_0, scales_up_rules>;

}  // namespace kvconform::variants
