// The prefix zoo: mutants and the policy variants (docs/mutants.md).
#include "impls/prefix/mutants/prefix_bugs.h"
#include "impls/prefix/policies.h"
#include "impls/prefix/prefix.h"
#include "properties/kinds/prefix/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

namespace {
/// The policies (docs/kinds/prefix.md): each choice declared and made, declared and not made, made undeclared.
std::vector<implementation> policy_zoo() {
  return {
      variant<declaring<basic_prefix<prefix_all_but_last_rules>, policies::all_but_last>>(
          "prefix-hit-all-but-last", "a hit never covers the last token (vLLM, SGLang)"),
      mutant<declaring<prefix, policies::all_but_last>>("prefix-declared-all-but-last-hits-all", "prefix_eviction_lru",
                                                        "declares hit_limit, hits all"),
      mutant<basic_prefix<prefix_all_but_last_rules>>("prefix-undeclared-all-but-last", "prefix_eviction_lru",
                                                      "stops before the last token, undeclared"),
      variant<declaring<basic_prefix<prefix_all_but_last_block_rules>, policies::all_but_last_block>>(
          "prefix-hit-all-but-last-block", "a hit never covers the last token nor its last matched block (EAGLE)"),
      mutant<declaring<basic_prefix<prefix_all_but_last_rules>, policies::all_but_last_block>>(
          "prefix-declared-all-but-last-block-keeps-it", "prefix_eviction_lru",
          "declares hit_limit=all_but_last_block, keeps its last matched block"),
      mutant<basic_prefix<prefix_all_but_last_block_rules>>(
          "prefix-undeclared-all-but-last-block", "prefix_eviction_lru", "drops its last matched block, undeclared"),
      variant<declaring<basic_prefix<prefix_registered_rules>, policies::registered>>(
          "prefix-duplicates-registered", "every full block registered (vLLM)"),
      mutant<declaring<prefix, policies::registered>>("prefix-declared-registered-keeps-first",
                                                      "prefix_rollback_keeps_registered",
                                                      "declares duplicates=registered"),
      mutant<basic_prefix<prefix_registered_rules>>("prefix-undeclared-registered", "prefix_rollback_keeps_registered",
                                                    "registers duplicates, undeclared"),
      variant<declaring<basic_prefix<prefix_adopted_rules>, policies::adopted>>(
          "prefix-duplicates-adopted", "the cached block adopted in place of a duplicate (SGLang)"),
      mutant<declaring<prefix, policies::adopted>>("prefix-declared-adopted-keeps-own",
                                                   "prefix_rollback_keeps_registered", "declares duplicates=adopted"),
      mutant<basic_prefix<prefix_adopted_rules>>("prefix-undeclared-adopted", "prefix_rollback_keeps_registered",
                                                 "adopts cached blocks, undeclared"),
      variant<declaring<basic_prefix<prefix_leaf_rules>, policies::leaf>>(
          "prefix-leaf-eviction", "whole least recently used leaves of the radix tree evicted (SGLang)"),
      mutant<declaring<basic_prefix<prefix_adopted_rules>, policies::leaf>>(
          "prefix-declared-leaf-evicts-blocks", "prefix_eviction_lru", "declares eviction=leaf, evicts blocks"),
      mutant<declaring<basic_prefix<prefix_leaf_rules>, policies::adopted>>(
          "prefix-undeclared-leaf", "prefix_eviction_lru", "evicts whole leaves, undeclared"),
      variant<declaring<basic_prefix<prefix_one_queue_rules>, policies::one_queue>>(
          "prefix-one-queue", "one queue of unheld blocks in release order (vLLM before #42656)"),
      mutant<declaring<prefix, policies::one_queue>>("prefix-declared-one-queue-free-first", "prefix_eviction_lru",
                                                     "declares free_order=one_queue"),
      mutant<basic_prefix<prefix_one_queue_rules>>("prefix-undeclared-one-queue", "prefix_eviction_lru",
                                                   "one queue, undeclared"),
      variant<declaring<basic_prefix<prefix_kept_rules>, policies::kept>>(
          "prefix-rollback-kept", "rolled-back blocks kept until the release (vLLM)"),
      mutant<declaring<prefix, policies::kept>>("prefix-declared-kept-frees", "prefix_rollback_keeps_registered",
                                                "declares rollback_blocks=kept, frees them"),
      mutant<basic_prefix<prefix_kept_rules>>("prefix-undeclared-kept", "prefix_rollback_keeps_registered",
                                              "keeps rolled-back blocks, undeclared"),
      variant<declaring<basic_prefix<prefix_vllm_rules>, policies::vllm_prefix>>(
          "prefix-vllm", "every choice vLLM v1 makes: hit_limit, duplicates, free_order, rollback_blocks"),
      variant<declaring<basic_prefix<prefix_sglang_rules>, policies::sglang_prefix>>(
          "prefix-sglang", "every choice SGLang's radix cache makes: hit_limit, duplicates, eviction"),
  };
}
}  // namespace

std::vector<implementation> prefix_zoo() {
  using namespace mutants;
  std::vector<implementation> all = {
      mutant<prefix_hash_without_parent>("prefix-hash-without-parent", "prefix_hits_longest_prefix", "own tokens only"),
      mutant<prefix_partial_block_shared>("prefix-partial-block-shared", "prefix_hits_longest_prefix", "a partial hit"),
      mutant<prefix_evicts_referenced>("prefix-evicts-referenced", "prefix_referenced_never_evicted", "held evicted"),
      mutant<prefix_lru_not_refreshed>("prefix-lru-not-refreshed", "prefix_eviction_lru", "LRU kept on reuse"),
      mutant<prefix_stale_hash>("prefix-stale-hash", "prefix_eviction_lru", "hash kept on eviction"),
      mutant<prefix_rollback_writes_registered>("prefix-rollback-writes-registered-block",
                                                "prefix_rollback_keeps_registered", "writes a registered block"),
      mutant<prefix_ignores_extra_key>("prefix-ignores-extra-key", "prefix_extra_key_isolation",
                                       "equal tokens under another tenant's key hit"),
  };
  for (implementation& i : policy_zoo()) all.push_back(std::move(i));
  return all;
}

}  // namespace kvconform::kinds
