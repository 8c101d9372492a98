// The built-in prefix caches: the reference and its mutants (docs/mutants.md).
#include "impls/prefix/mutants/prefix_bugs.h"
#include "impls/prefix/prefix.h"
#include "properties/kinds/prefix/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> prefix_builtins() {
  using namespace mutants;
  return {
      reference<prefix>("prefix", "prefix caching over a block pool, LRU eviction; double, two-pass softmax"),
      mutant<prefix_hash_without_parent>("prefix-hash-without-parent", "prefix_hits_longest_prefix", "own tokens only"),
      mutant<prefix_partial_block_shared>("prefix-partial-block-shared", "prefix_hits_longest_prefix", "a partial hit"),
      mutant<prefix_evicts_referenced>("prefix-evicts-referenced", "prefix_referenced_never_evicted", "held evicted"),
      mutant<prefix_lru_not_refreshed>("prefix-lru-not-refreshed", "prefix_eviction_lru", "LRU kept on reuse"),
      mutant<prefix_stale_hash>("prefix-stale-hash", "prefix_eviction_lru", "hash kept on eviction"),
      mutant<prefix_rollback_writes_registered>("prefix-rollback-writes-registered-block",
                                                "prefix_rollback_keeps_registered", "writes a registered block"),
  };
}

}  // namespace kvconform::kinds
