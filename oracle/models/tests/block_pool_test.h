// What the block-pool models' tests (paged, prefix) share: a pool's config and a snapshot's counters.
#pragma once

#include <cstdint>
#include <string>

#include "properties/trace/trace.h"

namespace kvconform::model_tests {

/// A config of `kind`: `blocks` blocks of `block_size` rows one wide.
inline cache_config pool_config(cache_kind kind, std::size_t blocks, std::size_t block_size) {
  cache_config c{kind, blocks, 1, 1};
  c.block_size = block_size;
  return c;
}

/// Counter `name` of `s`; -1 when it has none.
inline std::int64_t counter(const snapshot& s, const std::string& name) {
  for (const auto& [n, v] : s.counters)
    if (n == name) return v;
  return -1;
}

}  // namespace kvconform::model_tests
