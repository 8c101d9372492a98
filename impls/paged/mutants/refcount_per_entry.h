// Mutant paged-refcount-per-entry (docs/mutants.md): fork adds a reference per filled slot, not per block.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct refcount_per_entry_rules : paged_rules {
  static std::size_t fork_references(std::size_t filled) { return filled; }
};
using paged_refcount_per_entry = basic_paged<refcount_per_entry_rules>;

}  // namespace kvconform::mutants
