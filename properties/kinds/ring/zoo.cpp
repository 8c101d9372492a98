// The ring zoo: mutants and the mlx-lm rollback variant (docs/mutants.md).
#include "impls/ring/mutants/bulk_keeps_first.h"
#include "impls/ring/mutants/group_shift.h"
#include "impls/ring/mutants/head_off_by_one.h"
#include "impls/ring/mutants/sink_bugs.h"
#include "impls/ring/mutants/speculation_bugs.h"
#include "impls/ring/policies.h"
#include "impls/ring/ring.h"
#include "properties/kinds/ring/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> ring_zoo() {
  using namespace mutants;
  return {
      mutant<ring_q8_group_shift>("ring-q8-group-shift", "order_preserved", "group boundaries shifted by one"),
      mutant<ring_head_off_by_one>("ring-head-off-by-one", "ring_window_last_steps", "transformers #47708"),
      mutant<ring_bulk_keeps_first>("ring-bulk-keeps-first", "ring_window_last_steps", "mlx-examples #1093"),
      mutant<ring_bulk_evicts_sinks>("ring-bulk-evicts-sinks", "ring_sinks_survive", "sinks lost to a bulk append"),
      mutant<ring_window_without_sinks>("ring-window-without-sinks", "ring_sinks_survive", "W + keep rows held"),
      mutant<ring_empty_append_evicts>("ring-empty-append-evicts", "ring_empty_append_unchanged", "mlx-lm: n = 0"),
      mutant<ring_rollback_keeps_attending>("ring-rollback-stale-window", "speculative_rounds",
                                            "mlx-lm #1486: a rollback that does not shrink what decode attends"),
      mutant<ring_prefill_late_window>("ring-prefill-late-window", "prefill_chunked_equals_whole",
                                       "vLLM #26042: early queries attend the window after the chunk"),
      variant<declaring<basic_ring<ring_before_full_rules>, policies::before_full>>(
          "ring-rollback-before-full", "every rollback refused once W steps are held (mlx-lm)"),
      mutant<declaring<ring, policies::before_full>>("ring-declared-before-full-rolls-back", "speculative_rounds",
                                                     "declares rollback=before_full, rolls back within the reserve"),
      mutant<basic_ring<ring_before_full_rules>>("ring-undeclared-before-full", "speculative_rounds",
                                                 "refuses rollbacks once full, undeclared")};
}

}  // namespace kvconform::kinds
