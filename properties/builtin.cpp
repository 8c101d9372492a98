// The built-in implementations; each goes through the same adapter a third party's type would.
#include "impls/flat.h"
#include "impls/mutants/flat_strict_capacity.h"
#include "impls/mutants/paged_fork_without_cow.h"
#include "impls/mutants/paged_leak_on_refusal.h"
#include "impls/mutants/paged_refcount_per_entry.h"
#include "impls/mutants/ring_bulk_keeps_first.h"
#include "impls/mutants/ring_head_off_by_one.h"
#include "impls/paged.h"
#include "impls/ring.h"
#include "properties/concepts.h"
#include "properties/paged_concept.h"
#include "properties/registry.h"

namespace kvconform {

const std::vector<implementation>& builtin_implementations() {
  static const std::vector<implementation> all = {
      make_implementation<flat>("flat", "reference", "fixed-capacity cache, double, two-pass softmax"),
      make_implementation<ring>("ring", "reference", "sliding-window ring of W rows, double, two-pass softmax"),
      make_implementation<paged>("paged", "reference", "block pool shared by sequences: fork, copy-on-write, release, preemption; double, two-pass softmax"),
      make_implementation<mutants::flat_strict_capacity>(
          "flat-strict-capacity", "mutant", "seed bug: `>=` capacity check wastes the last slot; exact_fill should kill it"),
      make_implementation<mutants::ring_head_off_by_one>(
          "ring-head-off-by-one", "mutant", "peer bug 2: read start off by one after the first wrap; ring_window_last_steps should kill it"),
      make_implementation<mutants::ring_bulk_keeps_first>(
          "ring-bulk-keeps-first", "mutant", "peer bugs 17/18: an append of n > W keeps the first W rows; ring_window_last_steps should kill it"),
      make_implementation<mutants::paged_leak_on_refusal>(
          "paged-leak-on-refusal", "mutant", "DESIGN 7: a refused append keeps the blocks it took before the pool ran dry; refused_append_unchanged should kill it"),
      make_implementation<mutants::paged_fork_without_cow>(
          "paged-fork-without-cow", "mutant", "no copy-on-write: an append writes into a shared, partly filled last block; paged_copy_on_write should kill it"),
      make_implementation<mutants::paged_refcount_per_entry>(
          "paged-refcount-per-entry", "mutant", "peer bug 5: fork counts a reference per filled slot instead of per block; paged_block_accounting should kill it"),
  };
  return all;
}

const implementation* find_implementation(const std::string& name) {
  for (const implementation& i : builtin_implementations())
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace kvconform
