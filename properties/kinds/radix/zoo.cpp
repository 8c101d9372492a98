// The radix zoo: mutants after this year's radix-cache reports, and the hit_limit variants (docs/mutants.md).
#include "impls/radix/mutants/radix_bugs.h"
#include "properties/kinds/radix/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
struct radix_all_but_last_rules : radix_rules {
  static constexpr bool all_but_last = true;
};
}  // namespace

std::vector<implementation> radix_zoo() {
  using namespace mutants;
  using sglang = basic_radix<radix_all_but_last_rules>;
  return {
      mutant<radix_admit_stale_hit>("radix-admit-stale-hit", "radix_admitted_hit_decodes_as_miss",
                                    "an admit holds its lookup's pages, evicted since (vLLM #37076)"),
      mutant<radix_registers_before_write>("radix-registers-before-write", "radix_written_before_found",
                                           "admitted pages registered before their rows (vLLM PR #37152)"),
      mutant<radix_retract_frees_tree_pages>("radix-retract-frees-tree-pages", "radix_retract_abort_release_blocks",
                                             "retract and abort free the tree's pages (SGLang PR #38355)"),
      mutant<radix_lock_skips_matched_node>("radix-lock-skips-matched-node", "radix_lock_accounting",
                                            "the hit's last page left unlocked (mini-sglang PR #52)"),
      mutant<radix_duplicate_freed_unmapped>("radix-duplicate-freed-unmapped", "radix_lock_accounting",
                                             "a duplicate page freed before the remap (mini-sglang PR #142)"),
      mutant<radix_evictable_by_key_length>("radix-evictable-by-key-length", "radix_lock_accounting",
                                            "an evicted leaf counted by its tokens (SGLang PR #10637)"),
      mutant<radix_split_child_stale_key>("radix-split-child-stale-key", "radix_admitted_hit_decodes_as_miss",
                                          "the part past a split never found again (SGLang PR #36696)"),
      mutant<declaring<radix_unaligned_limit_match, policies::all_but_last>>(
          "radix-unaligned-limit-match", "radix_admitted_hit_decodes_as_miss",
          "all but the last token matched unaligned: the last page hit (SGLang PR #28692)"),
      variant<declaring<sglang, policies::all_but_last>>("radix-sglang",
                                                         "hit_limit=all_but_last, as SGLang's scheduler asks"),
      mutant<declaring<radix, policies::all_but_last>>("radix-declared-all-but-last-hits-all",
                                                       "radix_admitted_hit_decodes_as_miss",
                                                       "declares hit_limit=all_but_last, hits all"),
      mutant<sglang>("radix-undeclared-all-but-last", "radix_admitted_hit_decodes_as_miss",
                     "stops before the last token, undeclared"),
  };
}

}  // namespace kvconform::kinds
