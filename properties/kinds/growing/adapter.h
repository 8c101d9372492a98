// The growing_cache concept and its registration: a rows cache without capacity that reports its reserved rows.
#pragma once

#include "properties/kinds/flat/adapter.h"

namespace kvconform {

/// growing(step, d_k, d_v): a cache with the flat cache's calls that never refuses for room and
/// reports reserved(), the rows of storage it holds (whole steps of `step`, none before the first
/// append). It subsumes flat_cache, so make_implementation picks this registration for it.
template <class C>
concept growing_cache = flat_cache<C> && reports_reserved<C>;

/// A registry entry for a growing cache type.
template <growing_cache C>
implementation make_implementation(implementation_info info) {
  return rows_implementation<C>(std::move(info), cache_kind::growing);
}

}  // namespace kvconform
