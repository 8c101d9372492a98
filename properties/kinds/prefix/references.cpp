// The built-in prefix reference (docs/kinds/prefix.md).
#include "impls/prefix/prefix.h"
#include "properties/kinds/prefix/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> prefix_references() {
  return {reference<prefix>("prefix", "prefix caching over a block pool, LRU eviction; double, two-pass softmax")};
}

}  // namespace kvconform::kinds
