// The growing zoo: its mutant (docs/mutants.md).
#include "impls/growing/growing.h"
#include "impls/growing/mutants/doubles.h"
#include "properties/kinds/growing/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> growing_zoo() {
  using namespace mutants;
  return {mutant<growing_doubles>("growing-doubles", "growing_memory_follows_rule", "doubles instead of stepping")};
}

}  // namespace kvconform::kinds
