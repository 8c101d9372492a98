// Mutant paged-fork-without-cow (docs/mutants.md): an append writes into a shared, partly filled last block.
#pragma once

#include "impls/paged/paged.h"

namespace kvconform::mutants {

struct fork_without_cow_rules : paged_rules {
  static bool copy_on_write(std::size_t /*refs*/) { return false; }
};
using paged_fork_without_cow = basic_paged<fork_without_cow_rules>;

}  // namespace kvconform::mutants
