// The built-in latent references: MLA rows in double, fp8 and q8_0 (docs/kinds/latent.md).
#include "impls/latent/latent.h"
#include "properties/kinds/latent/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> latent_references() {
  return {
      reference<latent>("latent", "MLA rows [c ; k_r] in a block pool, values the rows' latent part; absorbed decode"),
      reference<latent_stored<formats::e4m3_scaled>>("latent-e4m3",
                                                     "latent, fp8 e4m3 rows with a per-tensor scale, saturating"),
      reference<latent_stored<formats::q8_0>>("latent-q8_0",
                                              "latent, rows in int8 blocks of 32 (q8_0): values their first blocks"),
  };
}

}  // namespace kvconform::kinds
