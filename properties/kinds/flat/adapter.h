// The flat_cache concept and its registration: a rows cache with a fixed capacity.
#pragma once

#include "properties/executor/rows_adapter.h"

namespace kvconform {

/// flat(max_len, d_k, d_v): a rows_cache (append, size, keys, values; decode_step optional) that
/// refuses appends beyond max_len. Refusals are kvconform::error exceptions or returned statuses.
template <class C>
concept flat_cache = rows_cache<C> && !reports_positions<C>;

/// A registry entry for a flat cache type.
template <flat_cache C>
implementation make_implementation(implementation_info info) {
  return rows_implementation<C>(std::move(info), cache_kind::flat);
}

}  // namespace kvconform
