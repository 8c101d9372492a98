// The built-in paged caches: the reference and its mutants (docs/mutants.md).
#include "impls/paged/mutants/fork_without_cow.h"
#include "impls/paged/mutants/leak_on_refusal.h"
#include "impls/paged/mutants/refcount_per_entry.h"
#include "impls/paged/paged.h"
#include "properties/kinds/paged/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> paged_builtins() {
  using namespace mutants;
  constexpr auto mutant = impl_group::mutant;
  return {
      make_implementation<paged>(
          {"paged", impl_group::reference,
           "block pool shared by sequences with fork, copy-on-write and preemption; double, two-pass softmax"}),
      make_implementation<paged_leak_on_refusal>({"paged-leak-on-refusal", mutant,
                                                  "a refused append keeps the blocks it took before the pool ran dry",
                                                  "refused_append_unchanged"}),
      make_implementation<paged_fork_without_cow>(
          {"paged-fork-without-cow", mutant,
           "no copy-on-write: an append writes into a shared, partly filled last block", "paged_copy_on_write"}),
      make_implementation<paged_refcount_per_entry>(
          {"paged-refcount-per-entry", mutant, "vLLM #1556: fork counts a reference per filled slot, not per block",
           "paged_block_accounting"}),
  };
}

}  // namespace kvconform::kinds
