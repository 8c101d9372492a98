// The latent zoo: mutants and valid variants, the materialising decode among them (docs/mutants.md).
#include "impls/latent/latent.h"
#include "impls/latent/mutants/chunk_without_context.h"
#include "impls/latent/mutants/latent_width_scale.h"
#include "impls/latent/mutants/no_rotary_scores.h"
#include "impls/latent/mutants/stale_block_rows.h"
#include "impls/latent/mutants/values_offset.h"
#include "impls/latent/mutants/values_unscaled.h"
#include "impls/latent/mutants/wrong_head.h"
#include "impls/latent/variants.h"
#include "impls/paged/policies.h"
#include "properties/kinds/latent/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> latent_zoo() {
  using namespace mutants;
  return {variant<variants::latent_materialised>("latent-materialised",
                                                 "builds each head's keys and values first, then decodes over them"),
          variant<variants::latent_q8_0_scales_up>("latent-q8_0-scales-up",
                                                   "q8_0 rows whose fp16 scales round up, not to nearest"),
          mutant<latent_values_past_rotary>("latent-values-past-rotary", "latent_values_are_rows",
                                            "values read from an offset that takes in the rotary part"),
          mutant<latent_scores_without_rotary>("latent-scores-without-rotary", "latent_decode_heads",
                                               "q_r . k_r left out of the scores"),
          mutant<latent_scale_of_latent_width>("latent-scale-of-latent-width", "latent_decode_heads",
                                               "softmax scale 1/sqrt(d_c + d_r) instead of the head's"),
          mutant<latent_e4m3_values_unscaled>("latent-e4m3-values-unscaled", "latent_decode_heads",
                                              "fp8 scale applied to keys, not to the values read from the same rows"),
          mutant<latent_stale_block_rows>("latent-stale-block-rows", "latent_reused_blocks",
                                          "decode attends the last block's every slot (vLLM #37530)"),
          mutant<latent_absorbed_wrong_head>("latent-absorbed-wrong-head", "latent_decode_heads",
                                             "head h's query absorbed with the next head's W_uk"),
          mutant<latent_chunk_without_context>("latent-chunk-without-context", "prefill_chunked_equals_whole",
                                               "a prefill's queries attend their own chunk only (vLLM #26042)"),
          variant<declaring<basic_latent<latent_kept_rules>, policies::rollback_kept>>(
              "latent-rollback-kept", "rolled-back blocks kept until the release (vLLM's rejected drafts)"),
          mutant<declaring<latent, policies::rollback_kept>>("latent-declared-kept-frees", "speculative_rounds",
                                                             "declares rollback_blocks=kept, frees them"),
          mutant<basic_latent<latent_kept_rules>>("latent-undeclared-kept", "speculative_rounds",
                                                  "keeps rolled-back blocks, undeclared")};
}

}  // namespace kvconform::kinds
