// The ring_cache concept and its registration: a rows cache that evicts and reports positions.
#pragma once

#include "properties/executor/rows_adapter.h"

namespace kvconform {

/// ring(window, d_k, d_v): a rows_cache that never refuses for room (the oldest rows go), and
/// reports total() (steps ever appended) and positions() (each held row's absolute index).
/// Optional attention sinks: ring(window, d_k, d_v, keep) never evicts the first `keep` steps.
template <class C>
concept ring_cache = rows_cache<C> && reports_positions<C>;

/// A registry entry for a ring cache type.
template <ring_cache C>
implementation make_implementation(implementation_info info) {
  return rows_implementation<C>(std::move(info), cache_kind::ring);
}

}  // namespace kvconform
