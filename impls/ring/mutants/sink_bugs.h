// Mutants of attention sinks (docs/mutants.md): sinks lost to a bulk append, a window that leaves the sinks out.
#pragma once

#include "impls/ring/ring.h"

namespace kvconform::mutants {

/// ring-bulk-evicts-sinks: an append of n > W rows writes only its last W, as a ring without sinks
/// may (the rows before would be overwritten anyway), so sinks that come in one bulk append are lost.
struct bulk_evicts_sinks_rules : ring_rules {
  static std::pair<std::size_t, std::size_t> kept(std::size_t n, std::size_t window) {
    return {n > window ? n - window : 0, n};
  }
};
using ring_bulk_evicts_sinks = basic_ring<bulk_evicts_sinks_rules>;

/// ring-window-without-sinks: the window is counted without the sinks, so W + keep rows are held.
struct window_without_sinks_rules : ring_rules {
  static std::size_t ring_part(std::size_t window, std::size_t) { return window; }
};
using ring_window_without_sinks = basic_ring<window_without_sinks_rules>;

/// ring-empty-append-evicts (mlx-lm's rotating cache): a 0-step append on a full cache moves the
/// ring on by one, so the oldest row goes and a stale slot is reported as the newest step.
struct ring_empty_append_evicts : ring {
  using ring::ring;
  void append(array_view k, array_view v) {
    const bool full = size() == slots();
    ring::append(k, v);  // throws (changing nothing) on a bad shape
    if (full && steps_of(k).steps == 0) ++total_;
  }
};

}  // namespace kvconform::mutants
