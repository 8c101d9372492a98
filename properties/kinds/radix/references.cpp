// The built-in radix reference (docs/kinds/radix.md).
#include "impls/radix/radix.h"
#include "properties/kinds/radix/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> radix_references() {
  return {reference<radix>("radix", "SGLang's radix cache driven in a scheduler's phases; double, two-pass softmax")};
}

}  // namespace kvconform::kinds
