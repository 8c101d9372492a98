// Mutant (docs/mutants.md, paged-refcount-per-entry; vLLM #1556): fork adds a reference per table entry (one per filled
// slot, as in a slot mapping) instead of one per block; paged_block_accounting kills it.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct refcount_per_entry_rules : paged_rules {
  static std::size_t fork_references(std::size_t filled) { return filled; }
};
using paged_refcount_per_entry = basic_paged<refcount_per_entry_rules>;

}  // namespace kvconform::mutants
