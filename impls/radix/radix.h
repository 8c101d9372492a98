// The reference radix cache: prefix's pool under SGLang's tree, its phases and its locks (docs/kinds/radix.md).
#pragma once

#include <algorithm>
#include <cstddef>

#include "impls/prefix/policies.h"

namespace kvconform {

/// SGLang's tree: one page per chain (duplicates adopted), whole leaves evicted least recently used first.
struct radix_rules : prefix_leaf_rules {};

/// A prefix cache under eviction=leaf and duplicates=adopted with its phases (lookup, admit, retract, abort:
/// impls/prefix/prefix.h) and protected_blocks(), the registered pages a table holds: SGLang's protected size.
template <class Rules = radix_rules>
class basic_radix : public basic_prefix<Rules> {
 public:
  using basic_prefix<Rules>::basic_prefix;

  std::size_t protected_blocks() const {
    return static_cast<std::size_t>(
        std::count_if(this->blocks_.begin(), this->blocks_.end(), [](const auto& b) { return b.hash && b.refs > 0; }));
  }
};

using radix = basic_radix<>;

}  // namespace kvconform
