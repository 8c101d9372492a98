// Valid variants of the hybrid reference (docs/mutants.md): other block orders and page layouts the contract allows.
#pragma once

#include <algorithm>
#include <vector>

#include "impls/hybrid/hybrid.h"

namespace kvconform::variants {

/// Hands out the highest free block first: block ids are compared up to renaming.
struct highest_first_rules : hybrid_rules {
  static std::vector<std::size_t> take(std::vector<std::size_t>& free, std::size_t need) {
    std::sort(free.begin(), free.end());
    return hybrid_rules::take(free, need);
  }
};
using hybrid_highest_first = basic_hybrid<highest_first_rules>;

/// Hands out the block freed longest ago first (a FIFO free list, as vLLM's free block queue), not the latest.
struct oldest_freed_first_rules : hybrid_rules {
  static std::vector<std::size_t> take(std::vector<std::size_t>& free, std::size_t need) {
    std::vector<std::size_t> taken(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(need));
    free.erase(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(need));
    return taken;
  }
};
using hybrid_oldest_freed_first = basic_hybrid<oldest_freed_first_rules>;

}  // namespace kvconform::variants
