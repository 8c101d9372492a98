// The paged zoo: mutants and the kept-rollback variant (docs/mutants.md).
#include "impls/paged/mutants/block_index_u16.h"
#include "impls/paged/mutants/e4m3_nan_overflow.h"
#include "impls/paged/mutants/fork_without_cow.h"
#include "impls/paged/mutants/leak_on_refusal.h"
#include "impls/paged/mutants/refcount_per_entry.h"
#include "impls/paged/mutants/rollback_truncates_shared.h"
#include "impls/paged/paged.h"
#include "impls/paged/policies.h"
#include "properties/kinds/paged/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> paged_zoo() {
  using namespace mutants;
  return {
      mutant<paged_e4m3_nan_overflow>("paged-e4m3-nan-overflow", "order_preserved",
                                      "e4m3 NaN where saturation is declared"),
      mutant<paged_leak_on_refusal>("paged-leak-on-refusal", "refused_append_unchanged", "a refusal leaks"),
      mutant<paged_fork_without_cow>("paged-fork-without-cow", "paged_copy_on_write", "no copy-on-write"),
      mutant<paged_refcount_per_entry>("paged-refcount-per-entry", "paged_block_accounting", "vLLM #1556"),
      mutant<paged_block_index_u16>("paged-block-index-u16", "paged_block_accounting",
                                    "block numbers kept in a uint16_t wrap past 2^16 blocks"),
      mutant<paged_rollback_truncates_shared>("paged-rollback-truncates-shared-block", "paged_rollback_sibling_intact",
                                              "a rollback frees the tail of a block its sibling holds"),
      variant<declaring<basic_paged<paged_kept_rules>, policies::rollback_kept>>(
          "paged-rollback-kept", "rolled-back blocks kept until the release (vLLM's rejected drafts)"),
      mutant<declaring<paged, policies::rollback_kept>>("paged-declared-kept-frees", "speculative_rounds",
                                                        "declares rollback_blocks=kept, frees them"),
      mutant<basic_paged<paged_kept_rules>>("paged-undeclared-kept", "speculative_rounds",
                                            "keeps rolled-back blocks, undeclared")};
}

}  // namespace kvconform::kinds
