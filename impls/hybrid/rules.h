// The rules of the reference hybrid cache that mutants and variants replace, and where its storage comes from.
#pragma once

#include <cstddef>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include <kvconform/hybrid.h>
#include "impls/common/attention.h"
#include "impls/common/row_storage.h"
#include "oracle/numeric/attention_semantics.h"

namespace kvconform {

/// The rules of a hybrid cache. Mutants replace one of them (impls/hybrid/mutants/*.h).
struct hybrid_rules {
  /// The element formats keys and values are stored in (docs/numerics.md §6.1), rounded on arrival; a hybrid block
  /// holds final rows of several layers, so no integer groups. The sliding group's may differ (hybrid_grouped).
  using storage = storage_policy<>;
  /// Whether a group drops rows outside the window: the sliding group only (docs/kinds/hybrid.md).
  static bool windowed(hybrid_group g) { return g == hybrid_group::sliding; }
  /// Whether block j (rows [j bs, (j + 1) bs)) holds a row a window of `window` rows with `keep` sinks reads at
  /// length n: a sink, or one of the last window - keep rows.
  static bool in_window(std::size_t j, std::size_t bs, std::size_t n, std::size_t window, std::size_t keep) {
    return j * bs < keep || (j + 1) * bs + (window - keep) > n;
  }
  /// Whether a block's row layout follows the group that takes it each time (a block moves between groups).
  static constexpr bool relayout_on_take = true;
  /// Whether a block's rows round to the formats of the group that takes it each time, not of its first taker.
  static constexpr bool reformat_on_take = true;
  /// Whether an append also writes the rows of shared layers (into their producers' slots).
  static constexpr bool shared_writes = false;
  /// Whether a prefill's query at row p reads the sliding window at p (not at the chunk's end).
  static constexpr bool window_per_query = true;
  /// Whether a prefix hit is the full group's alone, whatever blocks the sliding group's window lacks.
  static constexpr bool hit_full_group_only = false;
  /// The policy sliding_free=next_step (docs/kinds/hybrid.md): the window measured at the row the next step writes,
  /// as vLLM's remove_skipped_blocks does at the step's start.
  static constexpr bool next_step = false;
  /// The policy refused_append=frees_passed: a refused append still gives back the blocks its first new row no
  /// longer reads (vLLM's allocate_slots).
  static constexpr bool refused_frees = false;
  /// The attention every layer computes besides the window (docs/numerics.md §7): learned sinks, a soft cap.
  static constexpr attention_semantics attention{};
  /// Whether a sliding layer's decode keeps its learned sink (a mutant's windowed path drops it).
  static constexpr bool sink_in_window = true;
  /// Takes `need` blocks off the free list in pop order (a fresh pool hands out ascending blocks).
  static std::vector<std::size_t> take(std::vector<std::size_t>& free, std::size_t need) {
    std::vector<std::size_t> taken(free.rbegin(), free.rbegin() + static_cast<std::ptrdiff_t>(need));
    free.resize(free.size() - need);
    return taken;
  }
};

/// A row in its side's element format: each value rounded as it arrives, no state across rows.
template <class Side>
void store_row(Side& s, const double* in, double* out) {
  stream_state none;
  s.append(none, 0, in, out, true, [](std::size_t) { return typename Side::row_at{0, nullptr}; });
}

/// Layer l's declared soft cap and learned sink (docs/numerics.md §7): `sinks` holds one logit per layer for a
/// prefill (`all`), one for a decode; shape_error otherwise. A sliding layer of a mutant's windowed path drops it.
template <class Rules, class Layers>
score_terms layer_terms(array_view sinks, const Layers& layers, std::size_t l, bool all) {
  score_terms t = declared_terms(Rules::attention, sinks, all ? layers.size() : 1, all ? l : 0);
  t.has_sink = t.has_sink && (Rules::sink_in_window || layers[l].group != hybrid_group::sliding);
  return t;
}

/// The storage of a hybrid cache's sliding group: its rules' `sliding_storage`, else that of every group.
template <class Rules>
struct sliding_storage_of {
  using type = typename Rules::storage;
};
template <class Rules>
requires requires { typename Rules::sliding_storage; }
struct sliding_storage_of<Rules> {
  using type = typename Rules::sliding_storage;
};

}  // namespace kvconform
