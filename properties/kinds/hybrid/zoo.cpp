// The hybrid zoo: mutants and valid variants (docs/mutants.md).
#include "impls/hybrid/formats.h"
#include "impls/hybrid/mutants/cross_windowed.h"
#include "impls/hybrid/mutants/frees_early.h"
#include "impls/hybrid/mutants/global_windowed.h"
#include "impls/hybrid/mutants/hit_full_group_only.h"
#include "impls/hybrid/mutants/prefill_late_window.h"
#include "impls/hybrid/mutants/shared_writes.h"
#include "impls/hybrid/mutants/sink_dropped_sliding.h"
#include "impls/hybrid/mutants/stale_format.h"
#include "impls/hybrid/mutants/stale_layout.h"
#include "impls/hybrid/policies.h"
#include "impls/hybrid/variants.h"
#include "properties/kinds/hybrid/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> hybrid_zoo() {
  using namespace mutants;
  using namespace variants;
  return {
      mutant<hybrid_global_windowed>("hybrid-global-layers-windowed", "hybrid_window_frees_blocks",
                                     "the window applied to full layers (vLLM #51756)"),
      mutant<hybrid_stale_layout>("hybrid-reused-block-stale-layout", "hybrid_freed_blocks_reused",
                                  "a block another group freed keeps its old page layout (vLLM #47574)"),
      mutant<hybrid_stale_format>("hybrid-reused-block-stale-format", "hybrid_freed_blocks_reused",
                                  "a block keeps the formats of the group that took it first (vLLM #47574)"),
      mutant<hybrid_shared_writes>("hybrid-shared-layer-writes", "hybrid_shared_layers_read_producer",
                                   "a shared layer overwrites its producer's slots (vllm-ascend #11791)"),
      mutant<hybrid_cross_windowed>("hybrid-cross-layer-windowed", "hybrid_cross_rows_fixed",
                                    "the cross layer inherits the decoder's window (transformers #46111)"),
      mutant<hybrid_hit_full_group_only>("hybrid-prefix-hit-full-group-only", "hybrid_prefix_hits",
                                         "a prefix hit the sliding group's window blocks cannot back (vLLM #50457)"),
      mutant<hybrid_prefill_late_window>("hybrid-prefill-late-window", "hybrid_prefill_windows",
                                         "a prefill's early queries read the window its last step leaves"),
      mutant<hybrid_frees_early>("hybrid-window-frees-early", "hybrid_window_frees_blocks",
                                 "a sliding block freed one row early"),
      mutant<hybrid_sink_dropped_sliding>("hybrid-sink-dropped-sliding", "hybrid_layer_isolation",
                                          "SGLang PR #11634: gpt-oss's sliding layers attend without their sink"),
      variant<hybrid_highest_first>("hybrid-highest-first", "hands out the highest free block first"),
      variant<hybrid_oldest_freed_first>("hybrid-oldest-freed-first",
                                         "hands out the block freed longest ago first (a FIFO free list)"),
      variant<declaring<basic_hybrid<hybrid_next_step_rules>, policies::next_step>>(
          "hybrid-next-step", "the window measured at the next step's row (vLLM)"),
      mutant<declaring<hybrid, policies::next_step>>("hybrid-declared-next-step-frees-at-append",
                                                     "hybrid_window_frees_blocks", "declares sliding_free=next_step"),
      mutant<basic_hybrid<hybrid_next_step_rules>>("hybrid-undeclared-next-step", "hybrid_window_frees_blocks",
                                                   "frees passed blocks a step later, undeclared"),
      variant<declaring<basic_hybrid<hybrid_refused_frees_rules>, policies::frees_passed>>(
          "hybrid-refused-frees-passed", "a refused append still frees the passed blocks (vLLM)"),
      mutant<declaring<hybrid, policies::frees_passed>>("hybrid-declared-frees-passed-unchanged",
                                                        "hybrid_window_frees_blocks",
                                                        "declares refused_append=frees_passed"),
      mutant<basic_hybrid<hybrid_refused_frees_rules>>("hybrid-undeclared-frees-passed", "hybrid_window_frees_blocks",
                                                       "a refused append frees passed blocks, undeclared"),
      variant<hybrid_vllm>("hybrid-vllm", "vLLM v1's sliding-window manager: both its choices, no sinks")};
}

}  // namespace kvconform::kinds
