// The beam zoo: mutants (docs/mutants.md).
#include "impls/beam/beam.h"
#include "impls/beam/mutants/bf16_truncate.h"
#include "impls/beam/mutants/mask_sentinel.h"
#include "impls/beam/mutants/prefill_top_left.h"
#include "impls/beam/mutants/reorder_aliases.h"
#include "impls/beam/mutants/reorder_layer0_only.h"
#include "impls/beam/mutants/truncate_stale_length.h"
#include "properties/kinds/beam/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> beam_zoo() {
  using namespace mutants;
  return {mutant<beam_bf16_truncate>("beam-bf16-truncate", "order_preserved", "bf16 by truncation, not rounding"),
          mutant<beam_reorder_layer0_only>("beam-reorder-layer0-only", "beam_reorder_gathers", "transformers #46612"),
          mutant<beam_reorder_aliases>("beam-reorder-aliases", "beam_reorder_gathers", "repeated rows share storage"),
          mutant<beam_truncate_stale_length>("beam-truncate-stale-length", "beam_rollback_truncates", "a stale length"),
          mutant<beam_mask_sentinel>("beam-mask-sentinel", "beam_mask_left_padding", "FlashInfer #4267: a -5e4 mask"),
          mutant<beam_prefill_top_left>("beam-prefill-top-left", "beam_prefill_chunked_equals_whole",
                                        "pytorch #108108: a prefill's causal mask aligned top-left")};
}

}  // namespace kvconform::kinds
