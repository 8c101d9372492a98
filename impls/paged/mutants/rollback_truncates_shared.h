// Mutant paged-rollback-truncates-shared-block (docs/mutants.md): a rollback frees the tail of a block a sibling holds.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct rollback_truncates_shared_rules : paged_rules {
  static bool clears_tail(std::size_t /*refs*/) { return true; }
};
using paged_rollback_truncates_shared = basic_paged<rollback_truncates_shared_rules>;

}  // namespace kvconform::mutants
