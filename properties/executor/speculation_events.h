// The coverage events of prefill and rollback that every kind with both shares (docs/design.md §4.6).
#pragma once

#include <cstddef>
#include <cstdint>

#include "properties/executor/coverage.h"
#include "properties/executor/subject.h"

namespace kvconform {

inline bool has_rollback(const implementation& i) { return i.capabilities.has(capability::rollback); }
inline bool speculates(const implementation& i) { return has_rollback(i) && i.capabilities.has(capability::prefill); }

/// The three events, in the order speculation_probe marks them.
inline constexpr event rollback_to_empty_event{"rollback to empty", "an accepted rollback of every held step", true,
                                               has_rollback};
inline constexpr event accept_all_event{
    "accept-all", "a rollback of 0 steps right after a prefill: every draft accepted", true, speculates};
inline constexpr event reject_all_event{
    "reject-all", "a rollback of every step of the prefill just before it: every draft rejected", true, speculates};

/// Marks the events above, from index `first` of the kind's events on; `size` is the rows held after the op.
struct speculation_probe {
  std::size_t drafts = 0;  // the steps of the op before, when it was an accepted prefill
  void after(const op& o, const expectation& e, std::size_t size, event_set& hit, std::size_t first) {
    if (o.kind == op_kind::rollback && e.accepted) {
      if (o.count > 0 && size == 0) hit.set(first);
      if (drafts > 0 && o.count == 0) hit.set(first + 1);
      if (drafts > 0 && o.count == static_cast<std::int64_t>(drafts)) hit.set(first + 2);
    }
    // A prefill's k is (m, d_k): one draft per step, however many problems each step's queries make (latent heads).
    drafts = o.kind == op_kind::prefill && e.accepted && o.k.shape.size() == 2 ? o.k.shape[0] : 0;
  }
};

}  // namespace kvconform
