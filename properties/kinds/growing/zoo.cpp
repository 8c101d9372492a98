// The built-in growing caches: the reference and its mutant (docs/mutants.md).
#include "impls/growing/growing.h"
#include "impls/growing/mutants/doubles.h"
#include "properties/kinds/growing/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> growing_builtins() {
  using namespace mutants;
  return {reference<growing>("growing", "no capacity, storage in whole steps; double, two-pass softmax"),
          mutant<growing_doubles>("growing-doubles", "growing_memory_follows_rule", "doubles instead of stepping")};
}

}  // namespace kvconform::kinds
