// The built-in beam caches: the reference and its mutants (docs/mutants.md).
#include "impls/beam/beam.h"
#include "impls/beam/mutants/mask_sentinel.h"
#include "impls/beam/mutants/reorder_aliases.h"
#include "impls/beam/mutants/reorder_layer0_only.h"
#include "impls/beam/mutants/truncate_stale_length.h"
#include "properties/kinds/beam/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> beam_builtins() {
  using namespace mutants;
  constexpr auto mutant = impl_group::mutant;
  return {
      make_implementation<beam>(
          {"beam", impl_group::reference,
           "layers x batch x kv heads with prefill, rollback, reorder, GQA and masks; double, two-pass softmax"}),
      make_implementation<beam_reorder_layer0_only>({"beam-reorder-layer0-only", mutant,
                                                     "transformers #46612: reorder gathers layer 0 only",
                                                     "beam_reorder_gathers"}),
      make_implementation<beam_reorder_aliases>(
          {"beam-reorder-aliases", mutant, "interview task: a repeated row shares its twin's storage after reorder",
           "beam_reorder_gathers"}),
      make_implementation<beam_truncate_stale_length>({"beam-truncate-stale-length", mutant,
                                                       "interview task: a rollback keeps the stale length",
                                                       "beam_rollback_truncates"}),
      make_implementation<beam_mask_sentinel>({"beam-mask-sentinel", mutant,
                                               "FlashInfer #4267: a finite -5e4 mask sentinel instead of no weight",
                                               "beam_mask_left_padding"}),
  };
}

}  // namespace kvconform::kinds
