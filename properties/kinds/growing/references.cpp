// The built-in growing reference (docs/kinds/growing.md).
#include "impls/growing/growing.h"
#include "properties/kinds/growing/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> growing_references() {
  return {reference<growing>("growing", "no capacity, storage in whole steps; double, two-pass softmax")};
}

}  // namespace kvconform::kinds
