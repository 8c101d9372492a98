// The radix_cache concept and its registration: a prefix pool with its phases whose locks are counted.
#pragma once

#include <concepts>
#include <cstddef>
#include <utility>

#include "properties/kinds/prefix/adapter.h"

namespace kvconform {

/// radix(num_blocks, block_size, d_k, d_v): a prefix_cache with the phases (prefix_phased: lookup, admit, retract,
/// abort) and protected_blocks(), the registered pages a table holds (docs/kinds/radix.md).
template <class C>
concept radix_cache = prefix_cache<C> && prefix_phased<C> && requires(const C& cc) {
  { cc.protected_blocks() } -> std::convertible_to<std::size_t>;
};

/// The radix kind's part of the block-pool adapter: prefix's calls and phases, with the lock count.
template <radix_cache C>
struct radix_calls : prefix_calls<C> {
  static bool supports_op(const op& o) { return o.extra_key == 0; }
  static void count(const C& c, snapshot& s) {
    prefix_calls<C>::count(c, s);
    s.counters.emplace_back("protected_blocks", static_cast<std::int64_t>(c.protected_blocks()));
  }
};

/// A registry entry for a radix cache type; "decode", "prefill" and "rollback" when it has them.
template <radix_cache C>
implementation make_implementation(implementation_info info) {
  return block_pool_implementation<C, radix_calls<C>>(std::move(info), cache_kind::radix);
}

}  // namespace kvconform
